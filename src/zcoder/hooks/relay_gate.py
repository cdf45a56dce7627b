"""The RelayMessage hook: the user's program decides what becomes of a relayed message.

A relayed message is acknowledged by the listener (zcoder.relay, which knows nothing of
hooks and stays so) as soon as it is safely in the spool; the host then takes it from the
queue to run it. That is where this gate stands, the one place every front end that runs
relayed tasks passes through (the TUI's turns, an editor's session: zcoder.acp.relay),
before the task reaches the model:

* the hook allows it (exit 0, no decision, or ``permissionDecision: allow``): it runs;
* it refuses it (exit 2, ``decision: block``, ``permissionDecision: deny``): the message
  is done without running, and its sender gets the receipt any refused task gets
  (outcome ``refused``, the hook's reason as summary): no new wire type;
* it holds it (``permissionDecision: ask``, ``continue: false``): the message waits for
  the user in the relay's held messages (``/agents held``, ``run N``, ``discard N``);
* it fails, times out, answers JSON that cannot be read, or the wait is cancelled: held.
  A broken guard fails closed toward the user, and never loses the message.

Each message is judged once in a process: one the user runs from the held list is not
asked about again. A project hook the user has not allowed does not run here either
(zcoder.hooks.consent), so it cannot decide anything. The hook's deadline is its own
``timeout``, at most MAX_RELAY_HOOK_SECONDS (zcoder.hooks.config): a message never waits
longer than that for its hooks, which run at the same time.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Protocol

from zcoder.hooks.config import MAX_RELAY_HOOK_SECONDS, RELAY_MESSAGE
from zcoder.hooks.engine import EventOutcome, HookEngine
from zcoder.hooks.outcome import ASK, DENY
from zcoder.relay import ClaimedMessage, Envelope, sender_label

__all__ = ["MAX_RELAY_HOOK_SECONDS", "GateVerdict", "RelayGate", "RelayQueue"]

MAX_RECEIPT_REASON: Final = 500


class GateVerdict(StrEnum):
    RUN = "run"
    HOLD = "hold"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Judgement:
    verdict: GateVerdict
    reason: str = ""  # why it is held or refused, in the hook's words or ours
    notices: tuple[str, ...] = ()  # for the user (a hook's errors and messages)

    @property
    def receipt_summary(self) -> str:
        """The summary of the refused receipt its sender is sent."""
        return f"a hook of the receiving user refused it: {self.reason}"


class RelayQueue(Protocol):
    """What the gate does to a claimed message (zcoder.relay.Relay has these)."""

    def hold(self, claimed: ClaimedMessage) -> bool: ...

    def complete(self, claimed: ClaimedMessage) -> None: ...


def payload_of(envelope: Envelope) -> dict[str, object]:
    """What the hook reads on standard input, besides session_id, cwd and the event."""
    return {
        "sender": {
            "instance_id": envelope.sender_instance_id,
            "pid": envelope.sender_pid,
            "name": envelope.sender_project or envelope.sender_instance_id,
            "label": sender_label(envelope),
            # instance (a live interactive zcoder, verified), send (`zcoder send`) or
            # unverified (its manifest's claims): zcoder.relay.standing
            "kind": envelope.sender_kind or "unverified",
            "workspace": envelope.sender_workspace,
        },
        "message": envelope.body,
        "message_id": envelope.message_id,
    }


def verdict_of(outcome: EventOutcome) -> Judgement:
    notices = outcome.errors + outcome.messages
    if outcome.errors:
        return Judgement(GateVerdict.HOLD, "its RelayMessage hook failed", notices)
    if outcome.block or outcome.permission == DENY:
        return Judgement(
            GateVerdict.REFUSE, outcome.reason or "a RelayMessage hook refused it", notices
        )
    if outcome.permission == ASK or outcome.stop:
        reason = outcome.reason or outcome.stop_reason or "a RelayMessage hook held it"
        return Judgement(GateVerdict.HOLD, reason, notices)
    return Judgement(GateVerdict.RUN, "", notices)


class RelayGate:
    """Judges each relayed message once, with the engine's RelayMessage hooks."""

    def __init__(self) -> None:
        self._judged: set[str] = set()

    async def judge(self, engine: HookEngine | None, envelope: Envelope) -> Judgement:
        if not engine or envelope.message_id in self._judged:
            return Judgement(GateVerdict.RUN)
        if not hooks_judge(engine, envelope):
            return Judgement(GateVerdict.RUN)
        self._judged.add(envelope.message_id)
        try:
            outcome = await engine.relay_message(_subject(envelope), **payload_of(envelope))
        except Exception as exc:  # noqa: BLE001 - a hook that cannot run decides nothing
            return Judgement(GateVerdict.HOLD, f"its RelayMessage hook could not run ({exc})")
        return verdict_of(outcome)

    async def admit(
        self,
        engine: HookEngine | None,
        claimed: ClaimedMessage,
        queue: RelayQueue,
    ) -> Judgement:
        """Judge ``claimed`` and do what the judgement says to it, except running it: a
        held message goes to the held list, a refused one is done (the caller tells its
        sender). Cancelled while the hook runs, the message is held, then the
        cancellation goes on."""
        try:
            judgement = await self.judge(engine, claimed.envelope)
        except asyncio.CancelledError:
            _hold(queue, claimed)
            raise
        if judgement.verdict is GateVerdict.HOLD:
            problem = _hold(queue, claimed)
            if problem:
                judgement = dataclasses.replace(judgement, notices=(*judgement.notices, problem))
        elif judgement.verdict is GateVerdict.REFUSE:
            queue.complete(claimed)
            reason = judgement.reason
            if len(reason) > MAX_RECEIPT_REASON:
                reason = reason[: MAX_RECEIPT_REASON - 1] + "…"
            judgement = dataclasses.replace(judgement, reason=reason)
        return judgement


def hooks_judge(engine: HookEngine | None, envelope: Envelope) -> bool:
    """Whether a RelayMessage hook would judge ``envelope``: such a message never steers a
    running turn (where no hook can run); it waits, and runs through the gate as a turn."""
    return bool(engine and engine.hooks.commands_for(RELAY_MESSAGE, _subject(envelope)))


def _subject(envelope: Envelope) -> str:
    """What a RelayMessage matcher is tested against: the sender's name."""
    return envelope.sender_project or envelope.sender_instance_id


def _hold(queue: RelayQueue, claimed: ClaimedMessage) -> str:
    """Hold it; what went wrong ("" : nothing). A message that cannot be held stays in
    the spool's processing directory, where it is not run (and not lost)."""
    try:
        if queue.hold(claimed):
            return ""
        return "the message to hold was no longer in the queue"
    except Exception as exc:  # noqa: BLE001 - said to the user; the message is not run
        return f"the message could not be held ({exc}); it is not run"
