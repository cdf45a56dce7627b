"""The receiver's decision: one request payload in, one acknowledgement out.

Implements the decision order of the wire specification (section 6): the first rule that
fails answers. Pure apart from the sender check and the spool, both passed in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, Final, TypeVar

from zcoder.relay.held_shares import HeldQuotaReached
from zcoder.relay.peercred import PeerCredentials
from zcoder.relay.progress import Progress, ProgressError, validate_progress
from zcoder.relay.protocol import (
    PROTOCOL_VERSION,
    QUEUE,
    STEER,
    Ack,
    Envelope,
    EnvelopeError,
    FlatObject,
    FrameError,
    Ping,
    Request,
    decode_flat_object,
    is_message_id,
    validate_envelope,
)
from zcoder.relay.receipts import Receipt, ReceiptBook, ReceiptError, validate_receipt
from zcoder.relay.settings import Inbound
from zcoder.relay.spool import Spool, SpoolError
from zcoder.relay.watches import (
    IdleNotice,
    Watch,
    WatchBook,
    WatchError,
    validate_idle,
    validate_watch,
)

# What a sender the receiving user refuses (``ZCODER_RELAY_INBOUND=refuse``, a block) is
# told, beside the status ``paused`` (the protocol has no other word for it; zcoder.zsh
# reads any other as an unknown status). The ack's state says the receiver is not paused.
# One text for a block and for the default: a sender learns no more than that.
REFUSED_SENDER: Final = "the receiving user does not take messages from this sender"

# (sender instance id, sender pid, peer credentials) -> reason the sender is refused, or None
SenderCheck = Callable[[str, int, PeerCredentials | None], str | None]


@dataclass(frozen=True)
class Verified:
    """A checked sender's message as it is to be stored (its sender fields those that were
    verified, its ``sender_kind`` set) and what to do with it."""

    envelope: Envelope
    inbound: Inbound
    # The user trusts this sender (/agents trust) and its standing is a proven instance:
    # only then may its STEER reach the running turn. Looked up for a steer only.
    trusted: bool = False


@dataclass(frozen=True)
class Refused:
    """The envelope contradicts what was verified about its sender: ``invalid``, with a
    reason the sender is told in the ack (fixed text, no peer input in it)."""

    reason: str


# (checked envelope, peer credentials) -> the message to store and its fate, or a refusal
Verify = Callable[[Envelope, PeerCredentials | None], Verified | Refused]


@dataclass(frozen=True)
class Decision:
    ack: Ack
    reason: str = ""  # why, for logs and tests; never sent on the wire
    # What the request said, as sent (strings only; "" when absent or not a string), for
    # the log of refused requests. Never trusted, never sent back.
    request_type: str = ""
    message_id: str = ""
    sender_instance_id: str = ""

    @property
    def accepted(self) -> bool:
        return self.ack.status == "accepted"


_Answer = TypeVar("_Answer", Receipt, Progress, IdleNotice, Watch)

# (receiver, the request, its message_id echoed when a string, peer credentials) -> ack
Handler = Callable[["Receiver", FlatObject, str, "PeerCredentials | None"], "Decision"]


@dataclass(eq=False)
class Receiver:
    instance_id: str
    spool: Spool
    _: KW_ONLY
    max_message_chars: int
    max_queue: int
    state: Callable[[], str]
    sender_check: SenderCheck
    receipts: ReceiptBook | None = None  # None: receipts are `unsupported`, as in zcoder.zsh
    policy: Callable[[Envelope], Inbound] | None = None  # trust per peer (zcoder.relay.trust)
    # The sender's standing (zcoder.relay.standing): what is stored and shown, and the
    # policy for it; it replaces ``policy`` when given. Neither: accept all.
    verify: Verify | None = None
    # Where a request accepted for zcoder's process goes (a ``TO_PARENT`` type: a receipt
    # the book took); None: it stays here.
    forward: Callable[[Request], None] | None = None
    # Watches on this instance (zcoder.relay.watches); None: `unsupported`, as zcoder.zsh.
    watchers: WatchBook | None = None

    def _ack(
        self,
        message_id: str,
        status: str,
        reason: str = "",
        position: int = 0,
        *,
        tell: str = "",
        delivery: str = "",
    ) -> Decision:
        return Decision(Ack(message_id, status, position, self.state(), tell, delivery), reason)

    def unreadable(self, reason: str) -> Decision:
        """Rule 1 for frames that never became a payload (bad header, timeout, EOF)."""
        return self._ack("", "invalid", reason)

    def decide(self, payload: bytes, peer: PeerCredentials | None) -> Decision:
        try:
            obj = decode_flat_object(payload)
        except FrameError as exc:
            return self._ack("", "invalid", str(exc))
        decision = self._decide(obj, payload, peer)
        return Decision(  # not dataclasses.replace: this runs once per request
            decision.ack,
            decision.reason,
            _text(obj.get("type")),
            _text(obj.get("message_id")),
            _text(obj.get("sender_instance_id")),
        )

    def _decide(self, obj: FlatObject, payload: bytes, peer: PeerCredentials | None) -> Decision:
        raw_id = obj.get("message_id")
        echo = raw_id if isinstance(raw_id, str) else ""
        protocol = obj.get("protocol")
        if protocol != PROTOCOL_VERSION or isinstance(protocol, bool):
            return self._ack(echo, "unsupported", "protocol is not 1")
        if obj.get("target_instance_id") != self.instance_id:
            return self._ack(echo, "wrong_target", "target_instance_id is not this instance")
        kind = obj.get("type")
        handler = self.HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return self._unsupported(kind, echo)
        return handler(self, obj, echo, peer)

    def _unsupported(self, kind: object, echo: str) -> Decision:
        return self._ack(echo, "unsupported", f"unknown type {kind!r}")

    def _ping(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        return self._ack(echo, "pong")

    def _enqueue(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        if not is_message_id(echo):
            return self._ack("", "invalid", "message_id does not match its grammar")
        try:
            envelope = validate_envelope(obj, self.max_message_chars)
        except EnvelopeError as exc:
            return self._ack(echo, "invalid", str(exc))
        refused = self.sender_check(envelope.sender_instance_id, envelope.sender_pid, peer)
        if refused is not None:
            return self._ack(envelope.message_id, "invalid", refused)
        inbound: Inbound | None = None
        trusted = False
        if self.verify is not None:
            verified = self.verify(envelope, peer)
            if isinstance(verified, Refused):
                return self._ack(
                    envelope.message_id, "invalid", verified.reason, tell=verified.reason
                )
            envelope, inbound, trusted = verified.envelope, verified.inbound, verified.trusted
        if self.spool.is_duplicate(envelope.message_id):
            return self._ack(envelope.message_id, "duplicate")
        if self.state() == "paused":
            return self._ack(envelope.message_id, "paused")
        if inbound is None:
            inbound = self.policy(envelope) if self.policy is not None else Inbound.ACCEPT
        if inbound is Inbound.REFUSE:
            return self._ack(
                envelope.message_id, "paused", "the user refuses this sender", tell=REFUSED_SENDER
            )
        asked = envelope.delivery
        if asked and not (trusted and inbound is Inbound.ACCEPT and self.state() == "busy"):
            # Not a trusted instance's, or no turn runs: queued, and stored as queued, so
            # what the sender is told is what the receiving zcoder will do with it.
            envelope = dataclasses.replace(envelope, delivery="")
        try:
            # What is stored is what was validated (and verified), re-encoded: never the
            # sender's bytes, so no member the sender added (a forged sender_kind, say)
            # reaches the spool.
            status, position = self.spool.store(
                envelope, envelope.to_payload(), self.max_queue, held=inbound is Inbound.HOLD
            )
        except SpoolError as exc:
            return self._ack(envelope.message_id, "invalid", str(exc))
        except HeldQuotaReached as exc:
            # `full`: the sender's share of the queue is, whatever room is left for others.
            return self._ack(envelope.message_id, "full", str(exc), tell=str(exc))
        delivery = (STEER if envelope.delivery else QUEUE) if asked else ""
        return self._ack(envelope.message_id, status, position=position, delivery=delivery)

    def _receipt(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        """A receipt for a message this instance sent (zcoder.relay.receipts)."""
        return self._answer(
            obj, echo, peer, kind=Receipt.TYPE, validate=validate_receipt, accept=ReceiptBook.accept
        )

    def _progress(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        """Progress on a message this instance sent (zcoder.relay.progress)."""
        return self._answer(
            obj,
            echo,
            peer,
            kind=Progress.TYPE,
            validate=validate_progress,
            accept=ReceiptBook.accept_progress,
        )

    def _idle(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        """A watched peer says it is idle: only for a watch this instance sent it."""
        accept, kind = ReceiptBook.accept_idle, IdleNotice.TYPE
        return self._answer(obj, echo, peer, kind=kind, validate=validate_idle, accept=accept)

    def _watch(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        """A peer asks for one notice when this instance is next idle (zcoder.relay.watches);
        checked as a receipt is, kept by the listener, handed on only once it is due."""
        watchers = self.watchers
        if watchers is None:
            return self._unsupported(Watch.TYPE, echo)
        return self._answer(
            obj,
            echo,
            peer,
            kind=Watch.TYPE,
            validate=validate_watch,
            accept=lambda _book, watch: watchers.add(watch),
            hand_on=False,
        )

    def _answer(
        self,
        obj: FlatObject,
        echo: str,
        peer: PeerCredentials | None,
        *,
        kind: str,
        validate: Callable[[FlatObject], _Answer],
        accept: Callable[[ReceiptBook, _Answer], tuple[str, str]],
        hand_on: bool = True,
    ) -> Decision:
        """A receipt's or progress's decision: its members, its sender, then the book's
        word on the message it answers; handed on to zcoder's process once accepted."""
        if self.receipts is None:
            return self._unsupported(kind, echo)
        try:
            answer = validate(obj)
        except (ReceiptError, ProgressError, WatchError) as exc:
            return self._ack(echo if is_message_id(echo) else "", "invalid", str(exc))
        refused = self.sender_check(answer.sender_instance_id, answer.sender_pid, peer)
        if refused is not None:
            return self._ack(answer.message_id, "invalid", refused)
        status, reason = accept(self.receipts, answer)
        if status == "accepted" and hand_on and self.forward is not None:
            self.forward(answer)
        return self._ack(answer.message_id, status, reason)

    # The decision after rule 3, by the request's ``type`` (rule 4 and on): one row per
    # zcoder.relay.protocol.Request class; a type without a row is ``unsupported`` (rule 5).
    HANDLERS: ClassVar[Mapping[str, Handler]] = {
        Ping.TYPE: _ping,
        Envelope.TYPE: _enqueue,
        Receipt.TYPE: _receipt,
        Progress.TYPE: _progress,
        Watch.TYPE: _watch,
        IdleNotice.TYPE: _idle,
    }


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
