"""Edits in real turns through the fake Ollama: journalled by turn, shown, asked, undone."""

from __future__ import annotations

from tests.agent.support import Harness, make_harness, resumed_agent
from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import ToolFinished
from zcoder.tools import (
    ApprovalDecision,
    EditPolicy,
)

PATCH = "--- a/beta.py\n+++ b/beta.py\n@@ -1 +1,2 @@\n print('beta')\n+print('gamma')\n"


async def test_a_turns_edits_are_journalled_shown_and_kept_out_of_the_model_context(
    harness: Harness,
) -> None:
    harness.server.enqueue(
        Turn.tool_calls(
            call("write_file", {"path": "new.txt", "content": "hello\n"}, id="w"),
            call("apply_patch", {"patch": PATCH}, id="p"),
        ),
        Turn.text("done"),
        Turn.tool_calls(
            call("replace_text", {"path": "alpha.txt", "old_text": "alpha", "new_text": "A"})
        ),
        Turn.text("done again"),
    )
    await harness.agent.run_user_turn("make the files")
    await harness.agent.run_user_turn("and change alpha")
    journal = harness.agent.edits
    assert [(r.turn, r.path, r.label) for r in journal.store.records] == [
        (1, "new.txt", "make the files"),
        (1, "beta.py", "make the files"),
        (2, "alpha.txt", "and change alpha"),
    ]
    finished = harness.log.of(ToolFinished)
    assert "+print('gamma')" in finished[1].metadata["diff"]
    tool_messages = [m for m in harness.bodies()[1]["messages"] if m["role"] == "tool"]
    assert tool_messages[1]["content"] == "Applied patch: modified beta.py (+1 −0 lines)"
    assert all("@@" not in m["content"] for m in tool_messages)
    # The saved tool event carries the diff, so a reloaded transcript shows it too.
    saved = [e for e in harness.load().events if e.role == "tool"]
    assert "+hello" in saved[0].metadata["diff"]

    plan = journal.plan_undo()
    assert plan is not None and plan.label == "and change alpha"
    report = journal.undo(plan)
    harness.agent.note_for_model(report.note_for_model(), report.text())
    assert (harness.workspace / "alpha.txt").read_text() == "alpha\n"
    last = harness.agent.messages[-1]
    assert last["role"] == "user" and "undid the file changes" in last["content"]
    assert "restored alpha.txt" in last["content"]
    assert harness.load().messages[-1] == last  # saved at once


async def test_ask_mode_refusal_reaches_the_model_and_nothing_is_written(
    fake, store, workspace, client
) -> None:
    approver = ScriptedApprover(ApprovalDecision.DENY)
    harness = make_harness(fake, store, workspace, client, approver=approver, edits=EditPolicy.ASK)
    fake.enqueue(
        Turn.tool_calls(call("write_file", {"path": "alpha.txt", "content": "overwritten\n"})),
        Turn.text("ok, I will not"),
    )
    await harness.agent.run_user_turn("overwrite alpha")
    assert (workspace / "alpha.txt").read_text() == "alpha\n"
    tool_message = fake.chat_bodies[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "the user refused this edit of alpha.txt; nothing was written" in tool_message["content"]
    [request] = approver.edit_requests
    assert "-alpha\n+overwritten" in request.diff
    assert harness.agent.edits.plan_undo() is None


async def test_a_resumed_session_can_undo_the_edits_of_the_earlier_process(
    fake, store, workspace, client
) -> None:
    harness = make_harness(fake, store, workspace, client)
    fake.enqueue(
        Turn.tool_calls(call("write_file", {"path": "beta.py", "content": "print('new')\n"})),
        Turn.text("done"),
    )
    await harness.agent.run_user_turn("rewrite beta")
    data = harness.load()
    later = resumed_agent(client, store, workspace, data)
    plan = later.edits.plan_undo()
    assert plan is not None and plan.label == "rewrite beta"
    later.edits.undo(plan)
    assert (workspace / "beta.py").read_text() == "print('beta')\n"
