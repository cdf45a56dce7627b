"""What a turn saves: reloading the store gives back the same history and transcript."""

from __future__ import annotations

from tests.agent.support import make_harness, resumed_agent
from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import ErrorNotice
from zcoder.sessions import SessionStore
from zcoder.tools import ApprovalDecision, CommandPolicy


class StoreReadingApprover(ScriptedApprover):
    """Approves, after noting the tool events saved while the command waits for it."""

    def __init__(self, store: SessionStore, workspace: str) -> None:
        super().__init__(ApprovalDecision.ONCE)
        self.store = store
        self.workspace = workspace
        self.session_id = ""
        self.seen: list[dict[str, object]] = []

    async def approve_command(self, request):
        data = self.store.load(self.session_id, self.workspace, "coding")
        self.seen = [e.metadata for e in data.events if e.role == "tool"]
        return await super().approve_command(request)


async def test_a_turn_reloads_as_the_same_messages_ledger_and_events(
    fake, store, workspace, client
) -> None:
    approver = StoreReadingApprover(store, str(workspace))
    h = make_harness(fake, store, workspace, client, approver=approver)
    approver.session_id = h.session_id
    fake.enqueue(
        Turn.tool_calls(
            call("read_file", {"path": "missing.txt"}, id="r1"),
            call("run_command", {"command": "echo hi"}, id="r2"),
            content="Looking.",
        ),
        Turn.text("Done: hi."),
    )
    await h.agent.run_user_turn("check things")

    # While the command waited for approval its event was saved as running.
    assert [m["status"] for m in approver.seen] == ["failed", "running"]

    data = h.load()
    assert data.messages == h.agent.messages
    assert data.user_ledger == h.agent.user_ledger == ["check things"]
    assert [e.role for e in data.events] == ["user", "assistant", "tool", "tool", "assistant"]
    assert [e.text for e in data.events if e.role == "assistant"] == ["Looking.", "Done: hi."]
    tools = [e.metadata for e in data.events if e.role == "tool"]
    assert [(m["name"], m["call_id"], m["status"]) for m in tools] == [
        ("read_file", "r1", "failed"),
        ("run_command", "r2", "completed"),
    ]
    assert tools[1]["arguments"]["command"] == "echo hi"
    assert tools[1]["exit_code"] == 0
    assert [e.seq for e in data.events] == [1, 2, 3, 4, 5]

    # A new agent on the reloaded session sends exactly the saved history.
    fresh = resumed_agent(client, store, workspace, data, policy=CommandPolicy.DENY)
    fake.enqueue(Turn.text("again"))
    await fresh.run_user_turn("and now?")
    sent = fake.chat_bodies[-1]["messages"]
    assert sent[1:-1] == data.messages
    assert sent[-1] == {"role": "user", "content": "and now?"}
    assert store.load(h.session_id, workspace, "coding").user_ledger == [
        "check things",
        "and now?",
    ]


async def test_a_store_that_fails_does_not_break_the_turn(fake, store, workspace, client) -> None:
    h = make_harness(fake, store, workspace, client)
    store.close()
    fake.enqueue(Turn.text("still answering"))
    finished = await h.agent.run_user_turn("hi")
    assert finished.response == "still answering"
    warnings = [e.text for e in h.log.of(ErrorNotice)]
    assert len(warnings) == 1 and warnings[0].startswith("the session could not be saved")
