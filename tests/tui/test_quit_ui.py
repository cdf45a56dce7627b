"""QuitUI alone: a controller given the services it uses and a way to post, not the app.

The whole path through the real app and a real relay is test_relay_integration.py's and
test_relay_standing.py's; here the relay is a stand-in that holds messages in a list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from textual.message import Message

from tests.tui.parts_support import StandInHost, part_context, services_for
from zcoder.frontend.relay_inbox import DISCARD_SUMMARY, RelayHistory
from zcoder.relay import Envelope, Relay
from zcoder.tui.messages import ShowNotice
from zcoder.tui.parts.quit_ui import QuitUI


@dataclass
class Waiting:
    envelope: Envelope


@dataclass
class StandInRelay:
    queued: list[str]
    available: bool = True
    receipts: list[tuple[str, str, str]] = field(default_factory=list)

    def waiting(self) -> list[Waiting]:
        return [Waiting(cast(Envelope, body)) for body in self.queued]

    def held(self) -> list[Any]:
        return []

    def send_receipt(self, envelope: Envelope, outcome: str, summary: str) -> None:
        self.receipts.append((cast(str, envelope), outcome, summary))


class RecordingHistory(RelayHistory):
    """The inbox's relay history over the stand-in, keeping the states it records."""

    def __init__(self, relay: StandInRelay, recorded: list[tuple[str, str]]) -> None:
        super().__init__(
            cast(Relay, relay), store=lambda: None, session_id=lambda: None, workspace=Path()
        )
        self.recorded = recorded

    def received(self, envelope: Envelope, state: str) -> None:
        self.recorded.append((cast(str, envelope), state))


@dataclass
class World:
    relay: StandInRelay | None
    tmp_path: Path
    exits: list[int] = field(default_factory=list)
    recorded: list[tuple[str, str]] = field(default_factory=list)
    posted: list[Message] = field(default_factory=list)

    host: StandInHost = field(default_factory=StandInHost)

    @property
    def asked(self) -> list[tuple[Any, Callable[[bool | None], None]]]:
        return self.host.asked

    def quit_ui(self) -> QuitUI:
        history = None if self.relay is None else RecordingHistory(self.relay, self.recorded)
        services = services_for(self.tmp_path, self.tmp_path / "home")
        return QuitUI(
            part_context(services, self.posted, self.host),
            history=lambda: history,
            exit=self.exits.append,
        )


def test_with_nothing_queued_it_quits_at_once(tmp_path: Path) -> None:
    for relay in (None, StandInRelay([]), StandInRelay(["a task"], available=False)):
        world = World(relay, tmp_path)
        world.quit_ui().request(3)
        assert world.exits == [3] and world.asked == []


def test_with_messages_queued_it_asks_once_and_staying_keeps_them(tmp_path: Path) -> None:
    world = World(StandInRelay(["first", "second"]), tmp_path)
    quitting = world.quit_ui()
    quitting.request(0)
    quitting.request(0)  # asked already: one dialog
    ((dialog, answered),) = world.asked
    assert cast(list[str], dialog.messages) == ["first", "second"]
    answered(False)
    assert world.exits == [] and world.recorded == []
    (notice,) = world.posted
    assert isinstance(notice, ShowNotice) and notice.text.startswith("Staying")
    quitting.request(0)  # the question may be asked again
    assert len(world.asked) == 2


def test_leaving_discards_every_message_and_tells_each_sender(tmp_path: Path) -> None:
    relay = StandInRelay(["first", "second"])
    world = World(relay, tmp_path)
    quitting = world.quit_ui()
    quitting.request(7)
    world.asked[0][1](True)
    assert world.recorded == [("first", "discarded"), ("second", "discarded")]
    assert sorted(relay.receipts) == [
        ("first", "discarded", DISCARD_SUMMARY),
        ("second", "discarded", DISCARD_SUMMARY),
    ]
    assert world.exits == [7]


def test_leaving_first_delivers_what_was_told_before_a_stopped_tasks_cancelled(
    tmp_path: Path,
) -> None:
    """A task stopped as zcoder leaves queues its ``cancelled`` for the telling thread,
    which dies with the process: leaving waits for it (before, under load, the sender never
    heard: tests/acp/test_relay.py's vanishing editor)."""
    import time

    class SlowRelay(StandInRelay):
        def send_receipt(self, envelope: Envelope, outcome: str, summary: str) -> None:
            if outcome == "cancelled":
                time.sleep(0.3)  # a loaded machine: the telling thread is behind
            super().send_receipt(envelope, outcome, summary)

    class Stopped(str):
        message_id = "1-1"

    relay = SlowRelay(["first"])
    history = RecordingHistory(relay, [])
    history.send_receipt(cast(Envelope, Stopped("stopped")), "cancelled", "the user stopped it")
    assert history.discard_unrun() == 1
    assert [(body, outcome) for body, outcome, _ in relay.receipts] == [
        ("stopped", "cancelled"),
        ("first", "discarded"),
    ]
