"""ACP updates back into agent events: what zcoder's agent side sends (zcoder.acp.updates)
comes out here as the events the TUI draws, so both paths are the same code above the
sink. Each test runs the agent side's own translator, not hand-made updates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zcoder.acp.notices import SessionNotice
from zcoder.acp.updates import LIVE_OUTPUT_CHARS, EventTranslator, FileEdit, Update, replay
from zcoder.agent.events import (
    AgentEvent,
    AssistantDelta,
    AssistantMessage,
    ErrorNotice,
    Notice,
    Outcome,
    PlanChanged,
    StatusChanged,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnFinished,
    UserSteered,
)
from zcoder.agent.status import ContextUsage, Status
from zcoder.remote.events import UpdateReader, new_output, tool_name
from zcoder.sessions.records import TranscriptEvent
from zcoder.tools.plan import Plan


class Collected:
    def __init__(self) -> None:
        self.events: list[AgentEvent] = []
        self.user: list[str] = []
        self.reader = UpdateReader(self.events.append, self.user.append)

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def take(self, update: Update) -> None:
        """``update`` as it reaches --connect, which takes no notices: they reach it as
        agent messages (acp/notices.py)."""
        self.reader(update.fallback() if isinstance(update, SessionNotice) else update)


def through(events: list[AgentEvent], workspace: Path = Path("/w")) -> Collected:
    translate = EventTranslator(workspace)
    collected = Collected()
    for event in events:
        for update in translate(event):
            collected.take(update)
    return collected


def test_a_turn_with_a_command_comes_back_as_the_same_events() -> None:
    got = through(
        [
            AssistantDelta("Let me look. "),
            ToolStarted("c1", "run_command", {"command": "ls -l"}),
            ToolOutput("c1", "a\n"),
            ToolOutput("c1", "b\n"),
            ToolFinished("c1", "run_command", "completed", "a\nb\n[exit code 0]"),
            Notice("retrying the request"),
            ErrorNotice("the model said nothing"),
            ContextUsage(used=1200, window=8192, measured=True),
            AssistantDelta("Two files."),
            TurnFinished(Outcome.COMPLETE),
        ]
    )
    finished = got.reader.turn_ended(Outcome.COMPLETE)
    assert [m.text for m in got.of(AssistantMessage)] == ["Let me look. ", "Two files."]
    [started] = got.of(ToolStarted)
    assert (started.call_id, started.name, started.arguments) == (
        "c1",
        "run_command",
        {"command": "ls -l"},
    )
    assert "".join(o.text for o in got.of(ToolOutput)) == "a\nb\n"
    [done] = got.of(ToolFinished)
    assert (done.status, done.output) == ("completed", "a\nb\n[exit code 0]")
    assert [n.text for n in got.of(Notice)] == ["retrying the request"]
    assert [n.text for n in got.of(ErrorNotice)] == ["the model said nothing"]
    assert got.of(ContextUsage) == [ContextUsage(1200, 8192, True)]
    assert StatusChanged(Status.READY) in got.events
    assert finished.outcome is Outcome.COMPLETE and got.events[-1] == finished
    assert got.reader.last_reply == "Two files."
    # The reply before the call is whole before the call starts (the transcript's order).
    order = [type(e).__name__ for e in got.events]
    assert order.index("AssistantMessage") < order.index("ToolStarted")


def test_zcoder_statuses_and_edits_come_back() -> None:
    got = through(
        [
            ToolStarted("c1", "run_command", {"command": "sleep 9"}),
            ToolFinished("c1", "run_command", "interrupted", "[interrupted]"),
            ToolStarted("c2", "write_file", {"path": "a.txt", "content": "x"}),
            ToolFinished("c2", "write_file", "not_executed", "denied"),
        ]
    )
    assert [(e.name, e.status) for e in got.of(ToolFinished)] == [
        ("run_command", "interrupted"),
        ("write_file", "not_executed"),
    ]


def test_an_edit_diff_comes_back_as_a_unified_diff() -> None:
    translate = EventTranslator(Path("/w"))
    got = Collected()
    for update in translate(ToolStarted("e1", "replace_text", {"path": "a.py"})):
        got.take(update)
    translate.edited([FileEdit(Path("/w/a.py"), "x = 1\n", "x = 2\n")])
    for update in translate(ToolFinished("e1", "replace_text", "completed", "edited")):
        got.take(update)
    [done] = got.of(ToolFinished)
    assert done.name == "replace_text"
    assert "-x = 1" in done.metadata["diff"] and "+x = 2" in done.metadata["diff"]


def test_output_longer_than_the_tail_is_passed_on_once() -> None:
    text = "".join(f"line {n}\n" for n in range(12_000))
    assert len(text) > LIVE_OUTPUT_CHARS
    pieces = [text[i : i + 5000] for i in range(0, len(text), 5000)]
    got = through(
        [
            ToolStarted("c1", "run_command", {"command": "seq"}),
            *[ToolOutput("c1", piece) for piece in pieces],
        ]
    )
    assert "".join(o.text for o in got.of(ToolOutput)) == text


def test_new_output() -> None:
    assert new_output("ab", "abc") == "c"
    assert new_output("", "x") == "x"
    assert new_output("0123456789", "56789xy") == "xy"


def test_a_lost_connection_interrupts_the_running_calls() -> None:
    got = through([ToolStarted("c1", "run_command", {"command": "make test"})])
    got.reader.reply = "half a rep"
    assert got.reader.interrupted("the connection was lost") == ["make test"]
    [done] = got.of(ToolFinished)
    assert (done.status, done.output) == ("interrupted", "the connection was lost")
    [partial] = got.of(AssistantMessage)
    assert partial.partial
    assert got.reader.running_commands() == []


def test_a_loaded_session_comes_back_with_its_user_messages() -> None:
    saved = [
        TranscriptEvent(1, "s", 1, "user", "hello", {}, 0.0),
        TranscriptEvent(2, "s", 2, "assistant", "hi there", {}, 0.0),
        TranscriptEvent(
            3,
            "s",
            3,
            "tool",
            "[exit code 0]",
            {"name": "run_command", "call_id": "c9", "arguments": {"command": "true"}},
            0.0,
        ),
        TranscriptEvent(4, "s", 4, "system", "compacted", {}, 0.0),
    ]
    got = Collected()
    for update in replay(saved, Path("/w")):
        got.take(update)
    got.reader.end_reply()
    assert got.user == ["hello"]
    assert [m.text for m in got.of(AssistantMessage)] == ["hi there"]
    [done] = got.of(ToolFinished)
    assert (done.call_id, done.name) == ("c9", "run_command")
    assert [n.text for n in got.of(Notice)] == ["compacted"]


def test_tool_names_from_kind_and_title() -> None:
    assert tool_name("execute", "ls") == "run_command"
    assert tool_name("read", "Read a.py") == "read_file"
    assert tool_name("edit", "Patch a.py, b.py") == "apply_patch"
    assert tool_name("other", "List agents") == "list_agents"
    assert tool_name("other", "git: git_log /repo") == "git: git_log /repo"
    assert tool_name("other", "mcp_thing") == "mcp_thing"


def test_steering_comes_back_as_steering_live_and_replayed_not_as_a_user_message() -> None:
    live = through([UserSteered("use tabs\x1b[2J"), AssistantDelta("Tabs.")])
    assert live.of(UserSteered) == [UserSteered("use tabs\\e[2J")]  # made visible there
    assert live.user == []

    events = [
        TranscriptEvent(1, "s", 1, "user", "do it", {}, 0.0),
        TranscriptEvent(2, "s", 2, "user", "and tabs", {"steering": True}, 0.0),
    ]
    loaded = Collected()
    for update in replay(events, Path("/w")):
        loaded.take(update)
    assert loaded.user == ["do it"]
    assert loaded.of(UserSteered) == [UserSteered("and tabs")]


def test_the_plan_comes_back_as_the_same_plan_for_the_sidebar() -> None:
    plan = Plan.from_arguments(
        [
            {"text": "read the parser", "status": "done"},
            {"text": "write tests", "status": "in_progress"},
            {"text": "fix the bug", "status": "pending"},
        ]
    )
    got = through([PlanChanged(plan), PlanChanged(Plan())])
    assert [e.plan for e in got.of(PlanChanged)] == [plan, Plan()]
