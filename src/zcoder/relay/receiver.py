"""The receiver's decision: one request payload in, one acknowledgement out.

Implements the decision order of the wire specification (section 6): the first rule that
fails answers. Pure apart from the sender check and the spool, both passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, Final, TypeVar

from zcoder.relay.held_shares import HeldQuotaReached
from zcoder.relay.peercred import PeerCredentials
from zcoder.relay.protocol import (
    PROTOCOL_VERSION,
    Ack,
    Addressed,
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
    SentWatches,
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

# A request from a peer that is checked before it is answered (zcoder.relay.protocol.Addressed).
_Checked = TypeVar("_Checked", bound=Addressed)

# (sender instance id, sender pid, peer credentials) -> reason the sender is refused, or None
SenderCheck = Callable[[str, int, PeerCredentials | None], str | None]


@dataclass(frozen=True)
class Verified:
    """A checked sender's message as it is to be stored (its sender fields those that were
    verified, its ``sender_kind`` set) and what to do with it."""

    envelope: Envelope
    inbound: Inbound


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
    # Watches on this instance, and those it sent (zcoder.relay.watches); None: `unsupported`.
    watchers: WatchBook | None = None
    watching: SentWatches | None = None

    def _ack(
        self, message_id: str, status: str, reason: str = "", position: int = 0, *, tell: str = ""
    ) -> Decision:
        return Decision(Ack(message_id, status, position, self.state(), tell), reason)

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
        if self.verify is not None:
            verified = self.verify(envelope, peer)
            if isinstance(verified, Refused):
                return self._ack(
                    envelope.message_id, "invalid", verified.reason, tell=verified.reason
                )
            envelope, inbound = verified.envelope, verified.inbound
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
        return self._ack(envelope.message_id, status, position=position)

    def _answered(
        self,
        obj: FlatObject,
        echo: str,
        peer: PeerCredentials | None,
        validate: Callable[[FlatObject], _Checked],
        take: Callable[[_Checked], tuple[str, str]] | None,
        *,
        hand_on: bool = True,
    ) -> Decision:
        """A request from a registered live sender other than a task (a receipt, a watch,
        an idle notice): ``unsupported`` when nothing here takes it (``take`` is None, as
        in zcoder.zsh); ``invalid``, saying why, unless its members validate and its sender
        passes an enqueue's check; then what ``take`` answers. Accepted, it is handed on
        to zcoder's process (``hand_on``; a watch goes there later, once due)."""
        if take is None:
            return self._unsupported(obj.get("type"), echo)
        try:
            request = validate(obj)
        except (ReceiptError, WatchError) as exc:
            return self._ack(echo if is_message_id(echo) else "", "invalid", str(exc))
        refused = self.sender_check(request.sender_instance_id, request.sender_pid, peer)
        if refused is not None:
            return self._ack(request.message_id, "invalid", refused)
        status, reason = take(request)
        if status == "accepted" and hand_on and self.forward is not None:
            self.forward(request)
        return self._ack(request.message_id, status, reason)

    def _receipt(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        """A receipt for a message this instance sent (zcoder.relay.receipts)."""
        take = None if self.receipts is None else self.receipts.accept
        return self._answered(obj, echo, peer, validate_receipt, take)

    def _watch(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        """A peer asks for one notice when this instance is next idle."""
        take = None if self.watchers is None else self.watchers.add
        return self._answered(obj, echo, peer, validate_watch, take, hand_on=False)

    def _idle(self, obj: FlatObject, echo: str, peer: PeerCredentials | None) -> Decision:
        """A watched peer says it is idle: only for a watch this instance sent it."""
        take = None if self.watching is None else self.watching.accept
        return self._answered(obj, echo, peer, validate_idle, take)

    # The decision after rule 3, by the request's ``type`` (rule 4 and on): one row per
    # zcoder.relay.protocol.Request class; a type without a row is ``unsupported`` (rule 5).
    HANDLERS: ClassVar[Mapping[str, Handler]] = {
        Ping.TYPE: _ping,
        Envelope.TYPE: _enqueue,
        Receipt.TYPE: _receipt,
        Watch.TYPE: _watch,
        IdleNotice.TYPE: _idle,
    }


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
