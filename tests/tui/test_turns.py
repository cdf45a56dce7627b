"""Turns alone: what runs next and what each kind of turn asks of the agent, with a fake
agent behind the ``TurnAgent`` seam and fakes for the model and relay parts.

No app and no screen: ``start`` records the turn the screen would run, and the test runs
its body itself.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, cast

import pytest

from tests.tui.parts_support import part_context
from zcoder.agent.context_keeper import CompactResult
from zcoder.config import load_config
from zcoder.model import ModelError
from zcoder.tui.messages import HeaderFields, ShowNotice
from zcoder.tui.parts.services import Services
from zcoder.tui.parts.turns import Turns
from zcoder.tui.widgets.transcript import Entry

pytestmark = pytest.mark.timeout(30)


class FakeAgent:
    """Records each call a turn makes through the seam."""

    def __init__(self, compact_error: ModelError | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.compact_error = compact_error
        self.steering: Any = None

    async def run_user_turn(self, prompt: str) -> None:
        self.calls.append(("turn", prompt))

    async def run_user_command(self, command: str) -> None:
        self.calls.append(("command", command))

    async def run_steered_turn(self) -> None:
        steers = self.steering.take_steers() if self.steering is not None else []
        self.calls.append(("steered", " | ".join(s.text for s in steers)))

    async def compact(self, focus: str = "", *, automatic: bool = False) -> CompactResult:
        self.calls.append(("compact", focus))
        if self.compact_error is not None:
            raise self.compact_error
        return CompactResult(compacted=False, text="too little history")


class FakeModel:
    def __init__(self) -> None:
        self.did: list[str] = []

    async def window_ready(self) -> None:
        self.did.append("window")

    def check_allocation(self) -> None:
        self.did.append("allocation")

    def refresh_meter(self) -> None:
        self.did.append("meter")


class FakeRelay:
    """No relay: nothing waits."""

    def __init__(self) -> None:
        self.announced: list[int | None] = []

    def oldest_waiting(self) -> int | None:
        return None

    def announce_waiting(self, oldest: int | None) -> None:
        self.announced.append(oldest)


class FakeSessions:
    def __init__(self) -> None:
        self.refreshed = 0

    def refresh(self) -> None:
        self.refreshed += 1


Work = Callable[[], Coroutine[Any, Any, object]]


class Rig:
    def __init__(self, tmp_path: Path, *, busy: bool = False, **agent: Any) -> None:
        config = load_config(
            {"ZCODER_HOME": str(tmp_path / "home"), "ZCODER_RELAY": "off"},
            workspace=str(tmp_path),
        )
        self.services = Services(config, busy=lambda: busy)
        self.agent = FakeAgent(**agent)
        self.services.agent = cast(Any, self.agent)
        self.agent.steering = self.services.pending  # as tui/parts/startup.py sets it
        self.model, self.relay, self.sessions = FakeModel(), FakeRelay(), FakeSessions()
        self.posted: list[object] = []
        self.shown: list[Entry] = []
        self.started: list[tuple[Work, bool, bool]] = []
        self.queue_shown = 0
        self.turns = Turns(
            part_context(self.services, cast(Any, self.posted)),
            model=cast(Any, self.model),
            relay=cast(Any, self.relay),
            sessions=cast(Any, self.sessions),
            start=self.start,
            show=self.shown.append,
            show_queue=self.show_queue,
            plan=lambda _prompt: None,  # no custom command or skill by that name
        )

    def start(self, work: Work, *, relay: bool, model: bool = True) -> None:
        self.started.append((work, relay, model))

    def show_queue(self) -> None:
        self.queue_shown += 1

    def queue(self, *prompts: str) -> None:
        for prompt in prompts:
            self.services.scheduler.queue_prompt(prompt, last_accepted=0, oldest_waiting=None)


async def test_a_queued_prompt_is_shown_then_run_as_a_turn_through_the_seam(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path)
    rig.queue("fix the bug", "then the docs")
    rig.turns.schedule()
    [(work, relay, model)] = rig.started  # one turn at a time
    assert (relay, model) == (False, True)
    assert [e.plain for e in rig.shown] == ["you\nfix the bug"]  # before the turn runs
    assert rig.services.scheduler.prompts() == ("then the docs",) and rig.queue_shown == 1
    await work()
    assert rig.agent.calls == [("turn", "fix the bug")]
    # The window is sized before the request; the allocation is checked after it.
    assert rig.model.did == ["window", "allocation"] and rig.sessions.refreshed == 1


async def test_a_shell_command_runs_as_a_turn_without_the_model(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.queue("!ls -la")
    rig.turns.schedule()
    [(work, relay, model)] = rig.started
    assert (relay, model) == (False, False)  # the warm-up goes on
    assert rig.shown == []  # its own entry shows it
    await work()
    assert rig.agent.calls == [("command", "ls -la")]
    assert rig.model.did == ["meter"]


def test_nothing_starts_while_a_turn_runs_or_before_the_agent_exists(tmp_path: Path) -> None:
    busy = Rig(tmp_path, busy=True)
    busy.queue("wait for me")
    busy.turns.schedule()
    unstarted = Rig(tmp_path)
    unstarted.services.agent = None
    unstarted.queue("wait for me")
    unstarted.turns.schedule()
    assert busy.started == unstarted.started == []
    assert busy.services.scheduler.prompts() == ("wait for me",)


def test_idle_with_nothing_queued_says_what_waits_for_the_user(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.turns.schedule()
    assert rig.started == [] and rig.relay.announced == [None]


def status_changes(posted: list[object]) -> list[str]:
    return [m.changes["status"] for m in posted if isinstance(m, HeaderFields)]


async def test_compact_runs_as_a_turn_and_says_when_nothing_was_compacted(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path)
    rig.turns.compact("the API")
    [(work, relay, model)] = rig.started
    assert (relay, model) == (False, True)
    await work()
    assert rig.agent.calls == [("compact", "the API")]
    assert status_changes(rig.posted) == ["Compacting", "Ready"]
    notices = [m.text for m in rig.posted if isinstance(m, ShowNotice)]
    assert notices == ["Nothing compacted: too little history."]


async def test_a_failed_compaction_changes_nothing_and_says_so(tmp_path: Path) -> None:
    rig = Rig(tmp_path, compact_error=ModelError("the model went away"))
    rig.turns.compact("")
    await rig.started[0][0]()
    assert status_changes(rig.posted) == ["Compacting", "Error"]
    [notice] = [m for m in rig.posted if isinstance(m, ShowNotice)]
    assert notice.error and "nothing was changed: the model went away" in notice.text


def test_compact_waits_for_an_idle_agent(tmp_path: Path) -> None:
    rig = Rig(tmp_path, busy=True)
    rig.turns.compact("")
    assert rig.started == []
    [notice] = [m for m in rig.posted if isinstance(m, ShowNotice)]
    assert notice.text.startswith("/compact runs when no turn is running")


def notices(rig: Rig) -> list[str]:
    return [m.text for m in rig.posted if isinstance(m, ShowNotice)]


async def test_steering_left_by_a_turn_runs_next_before_follow_ups(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.queue("a follow-up")
    rig.turns.steer("look at the tests first")
    rig.turns.steer("and the docs")
    rig.turns.schedule()
    [(work, relay, _model)] = rig.started
    assert relay is False
    await work()
    assert rig.agent.calls == [("steered", "look at the tests first | and the docs")]
    assert rig.services.scheduler.prompts() == ("a follow-up",)
    rig.turns.schedule()
    await rig.started[1][0]()
    assert rig.agent.calls[-1] == ("turn", "a follow-up")


def test_a_command_or_skill_never_steers(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    assert rig.turns.steerable("use the other table")
    assert not rig.turns.steerable("!ls")
    rig.turns.plan = lambda prompt: (lambda: None) if prompt.startswith("/") else None  # type: ignore[assignment,return-value]
    assert not rig.turns.steerable("/review the diff")


def test_an_agent_without_a_steering_source_is_not_steered(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.agent.steering = None  # an agent that takes no steering here
    assert not rig.turns.steerable("use the other table")
    rig.agent.steering = rig.services.pending
    assert rig.turns.steerable("use the other table")


async def test_a_stop_holds_what_waits_and_queue_resume_runs_it(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.turns.steer("steer")
    rig.queue("follow")
    rig.turns.hold_waiting()
    assert "2 waiting inputs are held: /queue resume runs them" in notices(rig)[-1]
    rig.turns.schedule()
    assert rig.started == []  # held: nothing runs unasked
    rig.turns.queue_command("")
    listing = notices(rig)[-1]
    assert "1. steering (held): steer" in listing and "2. follow-up (held): follow" in listing
    rig.turns.queue_command("resume")
    assert notices(rig)[-1] == "Resumed 2 waiting inputs."
    [(work, _relay, _model)] = rig.started
    await work()
    assert rig.agent.calls == [("steered", "steer")]


def test_queue_drop_and_bad_controls_say_what_is_wrong(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.queue("one", "two")
    rig.turns.queue_command("drop 1")
    assert notices(rig)[-1] == "Dropped follow-up 1: one"
    assert rig.services.scheduler.prompts() == ("two",)
    for bad in ("drop 5", "drop x", "frobnicate"):
        rig.turns.queue_command(bad)
    errors = [m.text for m in rig.posted if isinstance(m, ShowNotice) and m.error]
    assert errors == [
        "no queued input number 5; there is 1 to 1",
        "/queue drop takes a number from /queue's list, not 'x'",
        "unknown /queue control 'frobnicate'; try /queue, /queue drop N or /queue resume",
    ]
    rig.turns.queue_command("resume")
    assert notices(rig)[-1] == "Nothing is held."
    assert rig.services.scheduler.prompts() == ("two",)
