"""A trusted peer's steer reaches a running turn (zcoder.frontend.peer_steering): real relays
in a private registry, the fake Ollama as the model. The receiver claims it at a safe point,
the sender is told ``steered`` and, at the turn's end, gets the turn's receipt; an untrusted
peer's steer waits for a turn of its own, and so does one a RelayMessage hook would judge."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.agent.support import Harness
from tests.agent.test_relay_tools import _relay
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.workspace import short_dir
from zcoder.agent import Outcome, RelayReceived, Steer, SteerSources
from zcoder.frontend.peer_steering import PeerSteers
from zcoder.frontend.relay_inbox import RelayHistory
from zcoder.relay import ClaimedMessage, Envelope, Relay
from zcoder.relay.trust import TRUST
from zcoder.sessions.relay_log import RelayLog

__all__ = ["short_dir"]

DEADLINE = 30.0


@pytest.fixture
def pair(short_dir: Path) -> Iterator[tuple[Relay, Relay]]:
    """(receiver, peer): the receiver runs a turn; the peer is a proven instance."""
    home = short_dir / "home"
    receiver = _relay(short_dir, "receiver", home=home, interactive=True)
    peer = _relay(short_dir, "peer", interactive=True)
    receiver.set_state("busy")
    try:
        yield receiver, peer
    finally:
        receiver.stop()
        peer.stop()


def _steers(
    harness: Harness,
    receiver: Relay,
    admits: Callable[[Envelope], bool] = lambda _task: True,
    *,
    trusting: Relay | None = None,
) -> PeerSteers:
    """The receiving agent's peer steering; the receiver's user trusts ``trusting``."""
    if trusting is not None:
        receiver.trust.set(str(trusting.workspace), TRUST)
    history = RelayHistory(
        receiver, store=lambda: None, session_id=lambda: None, workspace=receiver.workspace
    )
    steers = PeerSteers(lambda: receiver, lambda: history, admits=admits)
    harness.agent.steering = SteerSources(steers)
    harness.agent.recorder.on_event = steers.watching(harness.agent.recorder.on_event)
    return steers


def _news(peer: Relay, want: int) -> tuple[list[str], list[str]]:
    """The stages and outcomes ``peer`` was sent, once ``want`` of them came."""
    stages: list[str] = []
    outcomes: list[str] = []
    deadline = time.monotonic() + DEADLINE
    while len(stages) + len(outcomes) < want:
        assert time.monotonic() < deadline, (stages, outcomes)
        outcomes += [r.outcome for r, _ in peer.take_receipts()]
        stages += [p.stage for p, _ in peer.take_progress()]
        time.sleep(0.02)
    return stages, outcomes


@dataclass
class SentDuringTheToolCall:
    """A source that holds nothing: at the second safe point (the first tool call has run)
    it has the peer send its steer, as if it arrived while the call ran."""

    peer: Relay
    target: str
    calls: int = 0

    def take_steers(self) -> list[Steer]:
        self.calls += 1
        if self.calls == 2:
            sent = self.peer.send(self.target, "also check beta.py", delivery="steer")
            assert sent.delivery == "steer", sent.text
        return []


async def test_a_trusted_peers_steer_lands_in_the_running_turn_and_gets_its_receipt(
    harness: Harness, pair: tuple[Relay, Relay]
) -> None:
    receiver, peer = pair
    steers = _steers(harness, receiver, trusting=peer)
    assert receiver.instance_id is not None
    harness.server.enqueue(
        Turn.tool_calls(call("list_files", {"path": "."}, id="c1")), Turn.text("Done both.")
    )
    harness.agent.steering = SteerSources(SentDuringTheToolCall(peer, receiver.instance_id), steers)
    finished = await harness.agent.run_user_turn("list the files")
    assert finished.outcome is Outcome.COMPLETE

    second = harness.bodies()[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "user"]
    assert "<agent_relay>" in second[4]["content"]
    assert "also check beta.py" in second[4]["content"]
    (landed,) = harness.log.of(RelayReceived)
    assert landed.steered and landed.body == "also check beta.py"
    assert [e.body for e in steers.landed] == ["also check beta.py"]

    steers.turn_ended()
    assert steers.landed == []
    assert receiver.spool is not None
    assert list((receiver.spool.root / "processing").iterdir()) == []  # done, never rerun
    assert receiver.claim_one() is None
    assert _news(peer, 2) == (["steered"], ["completed"])


@pytest.mark.parametrize("case", ["untrusted", "a hook judges it"])
async def test_a_steer_that_may_not_steer_waits_for_its_own_turn(
    harness: Harness, pair: tuple[Relay, Relay], case: str
) -> None:
    """An untrusted peer's steer is queued (its ack says so); a trusted one's that a
    RelayMessage hook would judge is stored as a steer but left for a turn of its own."""
    receiver, peer = pair
    if case != "untrusted":
        receiver.trust.set(str(peer.workspace), TRUST)
    assert receiver.instance_id is not None
    steers = _steers(harness, receiver, admits=lambda _task: case == "untrusted")
    sent = peer.send(receiver.instance_id, "steer me", delivery="steer")
    assert sent.delivery == ("queue" if case == "untrusted" else "steer")
    harness.server.enqueue(Turn.text("ok"))
    await harness.agent.run_user_turn("hi")
    assert harness.log.of(RelayReceived) == []
    steers.turn_ended()
    claimed = receiver.claim_one()  # it runs later as an ordinary relayed turn
    assert isinstance(claimed, ClaimedMessage) and claimed.envelope.body == "steer me"


async def test_a_stopped_turn_gives_its_steers_a_cancelled_receipt(
    harness: Harness, pair: tuple[Relay, Relay]
) -> None:
    receiver, peer = pair
    steers = _steers(harness, receiver, trusting=peer)
    assert receiver.instance_id is not None
    assert peer.send(receiver.instance_id, "steer me", delivery="steer").delivery == "steer"
    assert [s.envelope and s.envelope.body for s in steers.take_steers()] == ["steer me"]
    steers.turn_ended(stopped=True)
    assert _news(peer, 2) == (["steered"], ["cancelled"])


def _sent_and_told(
    harness: Harness, pair: tuple[Relay, Relay], stage: str
) -> tuple[RelayHistory, ClaimedMessage]:
    """The second relay sends the first a task, which tells it ``stage``: the sender's
    history (not yet read) and the task as the receiver claimed it."""
    receiver, sender = pair
    history = RelayHistory(
        sender,
        store=lambda: harness.store,
        session_id=lambda: harness.session_id,
        workspace=sender.workspace,
    )
    assert receiver.instance_id is not None
    assert sender.send(receiver.instance_id, "run the tests").status == "accepted"
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert receiver.send_progress(claimed.envelope, stage) == "accepted"
    return history, claimed


async def test_progress_is_shown_kept_in_the_history_and_given_to_the_model(
    harness: Harness, pair: tuple[Relay, Relay]
) -> None:
    """The sender's side: progress arrives like a receipt (never a turn), says its stage in
    /inbox's history, and reaches the model as a short record, before the receipt."""
    receiver, sender = pair
    history, claimed = _sent_and_told(harness, pair, "started")
    before = len(harness.agent.messages)

    (shown,) = history.take_receipts(harness.agent)
    assert shown.text == "receiver started on it"
    assert shown.metadata["progress"] == "started"
    (record,) = harness.agent.messages[before:]
    assert record["role"] == "user" and "started on the task you sent it" in record["content"]
    assert len(record["content"]) < 300  # short: it costs context every request
    (entry,) = RelayLog(harness.store).history(sender.workspace)
    assert (entry.direction, entry.state) == ("sent", "started")
    assert harness.server.chat_bodies == []  # no turn was started

    assert receiver.send_receipt(claimed.envelope, "completed", "ok") == "accepted"
    assert [r.text for r in history.take_receipts(harness.agent)] == ["receiver completed: ok"]
    (entry,) = RelayLog(harness.store).history(sender.workspace)
    assert entry.receipt_outcome == "completed"


async def test_steered_progress_reads_as_a_sentence_on_screen_and_to_the_model(
    harness: Harness, pair: tuple[Relay, Relay]
) -> None:
    """`steered` is said as plain words, the task where it belongs: never "took into its
    running turn it"."""
    history, _ = _sent_and_told(harness, pair, "steered")
    before = len(harness.agent.messages)

    (shown,) = history.take_receipts(harness.agent)
    assert shown.text == "receiver took it into its running turn"
    (record,) = harness.agent.messages[before:]
    assert "took the task you sent it into its running turn." in record["content"]
