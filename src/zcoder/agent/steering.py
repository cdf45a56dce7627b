"""Steering: words that reach a running turn at its next safe point.

While a turn runs, the user (Enter) or a trusted peer (an envelope with ``delivery``
``steer``) may add to it. The front end keeps what waits and hands it over when the agent
asks (``SteerSource.take_steers``); the agent asks at every safe point: before each model
request of the turn, so after every tool call of the round has its result, never between a
call and its result, and never cancelling anything. What is handed over lands at once:

* the user's words join the history and the ledger as a user message (saved, titled as a
  prompt is) and are shown marked as steering (``UserSteered``);
* a peer's message joins the history wrapped and defused as every relayed task is
  (relay_wrapper), is shown as relayed (``RelayReceived`` with ``steered``), and from then
  on the turn is a steered one (``TurnOrigin.STEERED``): every command and edit asks,
  naming the sender, whatever ``a``, ``--yes``, a hook or the edit setting said before.

A source that holds nothing returns an empty list; what it hands over it no longer holds.
What is left when the turn ends without another safe point is the front end's to run next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from zcoder.agent.events import RelayReceived, UserSteered
from zcoder.agent.relay_tools import RELAY_SENDER_KEY
from zcoder.agent.relay_wrapper import relay_event_metadata, relay_wrapper
from zcoder.model import Message, user_message
from zcoder.relay import sender_from
from zcoder.tools import ApprovalPolicy, ToolContext, TurnOrigin

if TYPE_CHECKING:
    from zcoder.agent.recorder import Recorder
    from zcoder.relay import Envelope

__all__ = [
    "Steer",
    "SteerSource",
    "SteerSources",
    "Steerable",
    "TypedSteering",
    "land_steers",
    "revoke_for_relayed",
]

STEERED_KEY: Final = "steering"
"""The metadata key a landed steer's saved event carries (True)."""


@dataclass(frozen=True)
class Steer:
    """One piece of steering: the user's ``text``, or a peer's ``envelope`` (its body)."""

    text: str
    envelope: Envelope | None = None

    @classmethod
    def from_peer(cls, envelope: Envelope) -> Steer:
        return cls(envelope.body, envelope)


class SteerSource(Protocol):
    """What the front end holds for the running turn; the agent takes it all at once."""

    def take_steers(self) -> list[Steer]: ...


@runtime_checkable
class TypedSteering(SteerSource, Protocol):
    """A source that also takes the user's typed words (zcoder.frontend.pending's
    PendingInput): ``Agent.steer`` hands them to it."""

    def steer(self, text: str) -> object: ...


class Steerable:
    """The Agent's side of the front ends' seam (tui/parts/turns.py's TurnAgent)."""

    steering: SteerSource | None

    async def steer(self, text: str) -> bool:
        """Enter while a turn runs: ``text`` joins the steering source, to land at the
        turn's next safe point; False when the source takes no typed words (the front end
        then runs it as a prompt)."""
        source = typed_steering(self.steering)
        if source is None:
            return False
        source.steer(text)
        return True


def typed_steering(source: SteerSource | None) -> TypedSteering | None:
    """The source in ``source`` that takes the user's typed words, if any (the first, in a
    SteerSources)."""
    if isinstance(source, SteerSources):
        found = (typed_steering(each) for each in source.sources)
        return next((typed for typed in found if typed is not None), None)
    return source if isinstance(source, TypedSteering) else None


class SteerSources:
    """Several sources as one (the user's, the peers'): each asked in the order given."""

    def __init__(self, *sources: SteerSource) -> None:
        self.sources = sources

    def take_steers(self) -> list[Steer]:
        return [steer for source in self.sources for steer in source.take_steers()]


def revoke_for_relayed(approval: ApprovalPolicy, recorder: Recorder, what: str) -> None:
    """A relayed text (``what``: "A relayed task", "A peer's steering") is now in the
    conversation: a standing ``a`` ends, and the user is told so when there was one."""
    if approval.revoke_always():
        recorder.notice(
            f"{what} is now part of this conversation, so your earlier `a` (allow "
            "commands, or a web host's pages) no longer applies: they ask again until you "
            "press `a` anew."
        )


def land_steers(
    source: SteerSource | None,
    messages: list[Message],
    ledger: list[str],
    recorder: Recorder,
    ctx: ToolContext,
) -> bool:
    """Add what ``source`` holds to the turn, in order; True when anything landed (the
    history is then saved)."""
    steers = source.take_steers() if source is not None else []
    for steer in steers:
        if steer.envelope is None:
            _land_user(steer.text, messages, ledger, recorder)
        else:
            _land_peer(steer.envelope, messages, recorder, ctx)
    if steers:
        recorder.save_messages(messages)
    return bool(steers)


def _land_user(text: str, messages: list[Message], ledger: list[str], recorder: Recorder) -> None:
    ledger.append(text)
    messages.append(user_message(text))
    recorder.save(lambda store, sid: store.record_user_message(sid, text, {STEERED_KEY: True}))
    recorder.emit(UserSteered(text))


def _land_peer(
    envelope: Envelope, messages: list[Message], recorder: Recorder, ctx: ToolContext
) -> None:
    recorder.emit(RelayReceived.from_envelope(envelope, steered=True))
    recorder.event("relay", envelope.body, {**relay_event_metadata(envelope), STEERED_KEY: True})
    messages.append(user_message(relay_wrapper(envelope)))
    # The rest of the turn is the peer's as much as the user's: every command and edit
    # asks, naming this sender, and a reply may go only to it (agent/relay_tools.py).
    ctx.origin = TurnOrigin.STEERED
    ctx.requested_by = sender_from(envelope)
    ctx.sender_trusted = False
    ctx.extras[RELAY_SENDER_KEY] = envelope.sender_instance_id
    revoke_for_relayed(ctx.approval, recorder, "A peer's steering")
