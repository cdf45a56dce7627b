"""The peers' steering of a running turn, for any front end (no Textual).

A trusted peer may send a message with ``delivery`` ``steer`` (zcoder.relay); the listener
stores it as a steer only when this instance was busy and the sender is a proven instance
the user trusts, and says so in its ack. ``PeerSteers`` is the agent's SteerSource for
those messages (agent/steering.py): at each safe point of a turn it claims the stored
steers (``Relay.claim_steers``, which looks at the sender's standing and the user's trust
again: the stored flag alone is never enough), tells each sender ``steered``, and hands
them over. At the turn's end each claimed message is completed in the spool, its history
updated, and its sender sent the receipt of the turn it landed in. A steer that found no
safe point before the turn ended was never claimed: it stays queued and runs later as an
ordinary relayed turn. A message a RelayMessage hook would judge never steers (no hook
runs inside a turn): it waits for its own turn, through the hook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from zcoder.agent import EventSink, Steer, TurnFinished
from zcoder.frontend.relay_inbox import RelayHistory, receipt_outcome
from zcoder.relay import STEERED

if TYPE_CHECKING:
    from zcoder.agent import AgentEvent
    from zcoder.relay import ClaimedMessage, Envelope, Relay

STOPPED_SUMMARY = "the receiving agent's user stopped the task"
FAILED_SUMMARY = "the receiving zcoder failed unexpectedly"


class PeerSteers:
    """Peers' steers for the running turn (``take_steers``), and their end (``turn_ended``
    or ``finish``). ``relay`` and ``history`` are getters (both may come later);
    ``admits`` may keep a message out (a hook would judge it); ``landed`` is told when
    steers left the queue for the turn (a header's count of queued messages follows)."""

    def __init__(
        self,
        relay: Callable[[], Relay | None],
        history: Callable[[], RelayHistory | None],
        *,
        admits: Callable[[Envelope], bool] = lambda _task: True,
        landed: Callable[[], object] = lambda: None,
    ) -> None:
        self._relay = relay
        self._history = history
        self._admits = admits
        self._on_landed = landed
        self._landed: list[ClaimedMessage] = []
        self._finished: TurnFinished | None = None  # the running turn's end, once seen

    def take_steers(self) -> list[Steer]:
        relay = self._relay()
        if relay is None or not relay.available:
            return []
        claimed = relay.claim_steers(self._admits)
        history = self._history() if claimed else None
        for message in claimed:
            self._landed.append(message)
            if history is not None:
                history.received(message.envelope, "running")
                history.send_progress(message.envelope, STEERED)
        if claimed:
            self._on_landed()
        return [Steer.from_peer(message.envelope) for message in claimed]

    @property
    def landed(self) -> list[Envelope]:
        """The peers' messages that landed in the running turn."""
        return [message.envelope for message in self._landed]

    def watching(self, sink: EventSink) -> EventSink:
        """``sink``, with each turn's end noted here on the way (for ``turn_ended``)."""

        def on_event(event: AgentEvent) -> None:
            self._note(event)
            sink(event)

        return on_event

    def _note(self, seen: object) -> None:
        """Not a consumer of the agent's events (the sink is): it keeps one kind."""
        if isinstance(seen, TurnFinished):
            self._finished = seen

    def turn_ended(self, *, stopped: bool = False) -> None:
        """The turn is over (its worker ended): each message that landed in it is done, by
        the turn's outcome (cancelled when ``stopped``)."""
        finished, self._finished = self._finished, None
        if stopped:
            self.finish("cancelled", STOPPED_SUMMARY)
        elif finished is not None:
            self.finish(*receipt_outcome(finished))
        else:
            self.finish("failed", FAILED_SUMMARY)

    def finish(self, outcome: str, summary: str) -> None:
        """Each message that landed: completed in the spool (it never runs again), in the
        history by ``outcome``, and its sender sent the receipt."""
        landed, self._landed = self._landed, []
        if not landed:
            return
        relay, history = self._relay(), self._history()
        for message in landed:
            if relay is not None:
                relay.complete(message)
            if history is not None:
                history.finished(message.envelope, outcome, summary)
