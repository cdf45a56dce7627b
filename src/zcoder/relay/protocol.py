"""The relay's bytes on the wire (protocol version 1).

One length-prefixed request and one length-prefixed response per connection::

    ZCODER-AGENT/1 <decimal length>\\n<exactly length bytes of UTF-8 JSON>

Payloads are flat JSON objects (scalar members only), encoded compactly with the key order
of shared/spec/relay-wire-protocol.md so that a Zsh zcoder and a Python zcoder interoperate.
Everything here is pure: no sockets, no files. The payloads' codec is
zcoder.relay.flat_json, whose names most of the relay imports from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from math import isfinite
from typing import ClassVar, Final, TypeGuard, TypeVar

from zcoder.base.errors import ZcoderError
from zcoder.relay.flat_json import FlatObject as FlatObject  # noqa: PLC0414
from zcoder.relay.flat_json import FrameError as FrameError  # noqa: PLC0414
from zcoder.relay.flat_json import Scalar as Scalar  # noqa: PLC0414
from zcoder.relay.flat_json import _quote
from zcoder.relay.flat_json import decode_flat_object as decode_flat_object  # noqa: PLC0414
from zcoder.relay.flat_json import encode_flat_object as encode_flat_object  # noqa: PLC0414
from zcoder.relay.via import is_client_label

PROTOCOL_VERSION: Final = 1

INSTANCE_ID_RE: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")
MESSAGE_ID_RE: Final = re.compile(r"[A-Za-z0-9_.-]{1,100}")
MAX_SENDER_PROJECT_CHARS: Final = 256
MAX_SENDER_WORKSPACE_CHARS: Final = 4096
MAX_ACK_REASON_CHARS: Final = 200

STATES: Final = ("ready", "busy", "paused")
STATUSES: Final = (
    "pong",
    "accepted",
    "duplicate",
    "paused",
    "full",
    "invalid",
    "wrong_target",
    "unsupported",
)


def is_instance_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and INSTANCE_ID_RE.fullmatch(value) is not None


def is_message_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and MESSAGE_ID_RE.fullmatch(value) is not None


def is_positive_int(value: object) -> TypeGuard[int]:
    # bool is a subclass of int in Python; JSON true is not a pid.
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


# --- requests ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One dataclass per wire ``type`` (``TYPE``), writing its own bytes; a row each in
    zcoder.relay.receiver.Receiver.HANDLERS and, for ``TO_PARENT`` types (handed on to
    zcoder's process once accepted), in zcoder.relay.instance's (tests/relay/test_messages)."""

    TYPE: ClassVar[str]
    TO_PARENT: ClassVar[bool] = False
    message_id: str
    target_instance_id: str
    sender_instance_id: str

    def leading_members(self) -> dict[str, Scalar]:
        """The request's first members, in the order zcoder.zsh writes them."""
        return {
            "protocol": PROTOCOL_VERSION,
            "type": self.TYPE,
            "message_id": self.message_id,
            "target_instance_id": self.target_instance_id,
            "sender_instance_id": self.sender_instance_id,
        }

    def to_payload(self) -> bytes:
        raise NotImplementedError

    def encoded(self, members: dict[str, Scalar], optional: dict[str, Scalar | None]) -> bytes:
        """The request's bytes: its leading members, ``members``, then those of
        ``optional`` that are set (neither None nor empty), each group in its order."""
        written = self.leading_members()
        written.update(members)
        written.update({k: v for k, v in optional.items() if v is not None and v != ""})
        return encode_flat_object(written)


@dataclass(frozen=True)
class Ping(Request):
    """Discovery's liveness probe: answered ``pong``; nothing else of it is validated."""

    TYPE: ClassVar[str] = "ping"

    def to_payload(self) -> bytes:
        return encode_flat_object(self.leading_members())


def ping_request(message_id: str, target_instance_id: str, sender_instance_id: str) -> bytes:
    return Ping(message_id, target_instance_id, sender_instance_id).to_payload()


@dataclass(frozen=True)
class Addressed(Request):
    """A request that is stored or answered (an Envelope, a receipt): its sender's pid
    follows the leading members."""

    sender_pid: int

    def leading_members(self) -> dict[str, Scalar]:
        members = super().leading_members()
        members["sender_pid"] = self.sender_pid
        return members


@dataclass(frozen=True)
class Envelope(Addressed):
    """A validated task delivery (an ``enqueue`` request)."""

    TYPE: ClassVar[str] = "enqueue"
    sender_project: str
    sender_workspace: str
    body: str
    created_at: int | float | None
    # Who the receiver's listener found the sender to be (zcoder.relay.standing), recorded
    # in its private spool with the sender fields it verified. Never read from the wire.
    sender_kind: str = ""
    # The MCP client a message came through (zcoder.relay.via), as the sender labelled it;
    # an optional member after the spec's, which zcoder.zsh ignores. Never stored: the
    # listener folds it into the sender name it records, for a ``send`` sender only.
    sender_client: str = ""
    # The machine it came from over SSH (zcoder.relay.hosts): as sender_client, a label.
    sender_ssh: str = ""
    # STEER: the sender asks for the receiver's running turn (issue 29); "" is the
    # default, QUEUE, and is never written, so every queued message keeps its bytes.
    # Stored only when the receiver's ack said it will steer (zcoder.relay.receiver).
    delivery: str = ""

    def to_payload(self) -> bytes:
        # The listener re-encodes every message it stores (zcoder.relay.receiver), so this
        # runs once per enqueue: the JSON is joined from json's own C string quoting, the
        # same bytes encode_flat_object writes (tests/relay/test_protocol.py) at a third of
        # its cost. Numbers other than a validated envelope's fall back to the generic path.
        pid, created = self.sender_pid, self.created_at
        if type(pid) is int and (
            created is None
            or type(created) is int
            or (type(created) is float and isfinite(created))
        ):
            parts = [
                _ENQUEUE_HEAD,
                _quote(self.message_id),
                ',"target_instance_id":',
                _quote(self.target_instance_id),
                ',"sender_instance_id":',
                _quote(self.sender_instance_id),
                f',"sender_pid":{int.__repr__(pid)},"sender_project":',
                _quote(self.sender_project),
                ',"sender_workspace":',
                _quote(self.sender_workspace),
                ',"body":',
                _quote(self.body),
            ]
            if created is not None:
                parts.append(f',"created_at":{type(created).__repr__(created)}')
            if self.sender_client:
                parts += (',"sender_client":', _quote(self.sender_client))
            if self.sender_ssh:
                parts += (',"sender_ssh":', _quote(self.sender_ssh))
            if self.delivery:
                parts += (',"delivery":', _quote(self.delivery))
            if self.sender_kind:
                parts += (',"sender_kind":', _quote(self.sender_kind))
            parts.append("}")
            return "".join(parts).encode("utf-8")
        return self._generic_payload()

    def _generic_payload(self) -> bytes:
        return self.encoded(
            {
                "sender_project": self.sender_project,
                "sender_workspace": self.sender_workspace,
                "body": self.body,
            },
            {
                "created_at": self.created_at,
                "sender_client": self.sender_client,
                "sender_ssh": self.sender_ssh,
                "delivery": self.delivery,
                "sender_kind": self.sender_kind,
            },
        )


class EnvelopeError(ZcoderError, ValueError):
    """An enqueue request that fails validation (rule 7 of the decision order)."""


_ENQUEUE_HEAD: Final = f'{{"protocol":{PROTOCOL_VERSION},"type":"{Envelope.TYPE}","message_id":'


_Checked = TypeVar("_Checked")


def checked_member(
    obj: FlatObject,
    key: str,
    valid: Callable[[object], TypeGuard[_Checked]],
    error: type[ValueError],
    problem: str,
) -> _Checked:
    """``obj[key]`` when ``valid`` holds for it; else ``error("<key> <problem>")``."""
    value = obj.get(key)
    if not valid(value):
        raise error(f"{key} {problem}")
    return value


_NOT_MESSAGE_ID: Final = f"does not match {MESSAGE_ID_RE.pattern}"


def checked_sender(obj: FlatObject, error: type[ValueError]) -> tuple[str, str, int]:
    """A request's ``message_id``, ``sender_instance_id`` and ``sender_pid``: each of its
    grammar, the sender's id beginning with its pid and the message's id with the sender's
    id (an enqueue's and a receipt's alike); else ``error`` saying which is not."""
    message_id = checked_member(obj, "message_id", is_message_id, error, _NOT_MESSAGE_ID)
    pid = checked_member(obj, "sender_pid", is_positive_int, error, "must be a positive integer")
    sender = checked_member(
        obj, "sender_instance_id", is_instance_id, error, "is not an instance id"
    )
    if not sender.startswith(f"{pid}-"):
        raise error("sender_instance_id does not begin with sender_pid")
    if not message_id.startswith(f"{sender}-"):
        # Ids belong to their sender: no peer may take (and so block) another sender's id.
        raise error("message_id does not begin with sender_instance_id")
    return message_id, sender, pid


def optional_text(obj: FlatObject, key: str, limit: int, error: type[ValueError]) -> str:
    """``obj[key]`` ("" when absent): a string of at most ``limit`` characters, else
    ``error`` saying which it is not."""
    value = obj.get(key, "")
    if not isinstance(value, str):
        raise error(f"{key} must be a string")
    if len(value) > limit:
        raise error(f"{key} is longer than {limit} characters")
    return value


SENDER_KINDS: Final = ("instance", "send", "unverified")
QUEUE: Final = "queue"  # an envelope's ``delivery``: run as a turn of its own (the default)
STEER: Final = "steer"  # ... or reach the receiver's running turn, if it will let it
DELIVERIES: Final = (QUEUE, STEER)


def checked_delivery(obj: FlatObject, error: type[ValueError]) -> str:
    """A request's ``delivery`` (an envelope's, an ack's): STEER, or "" for QUEUE or none."""
    delivery = obj.get("delivery", QUEUE)
    if delivery not in DELIVERIES:
        raise error(f"delivery must be {QUEUE} or {STEER}")
    return STEER if delivery == STEER else ""


def validate_envelope(obj: FlatObject, max_message_chars: int, *, stored: bool = False) -> Envelope:
    """Validate the members of an enqueue request (message_id grammar included).

    Rules 6 and 7 of the receiver's decision order; the caller has checked protocol,
    target and type already. ``sender_kind`` is read only from a spool entry (``stored``),
    where the listener wrote it; on the wire it is the sender's word and is ignored.
    """
    message_id, sender_id, sender_pid = checked_sender(obj, EnvelopeError)
    target = checked_member(
        obj, "target_instance_id", is_instance_id, EnvelopeError, "is not an instance id"
    )
    body = obj.get("body")
    if not isinstance(body, str) or not body:
        raise EnvelopeError("body must be a non-empty string")
    if len(body) > max_message_chars:
        raise EnvelopeError(f"body is longer than {max_message_chars} characters")
    project = optional_text(obj, "sender_project", MAX_SENDER_PROJECT_CHARS, EnvelopeError)
    workspace = optional_text(obj, "sender_workspace", MAX_SENDER_WORKSPACE_CHARS, EnvelopeError)
    created_at = obj.get("created_at")
    if created_at is not None and (
        isinstance(created_at, bool)
        or not isinstance(created_at, int | float)
        or (isinstance(created_at, float) and not isfinite(created_at))
    ):
        # 1e999 decodes to infinity, which no JSON can hold: stored, it would be unreadable.
        raise EnvelopeError("created_at must be a number")
    kind = obj.get("sender_kind", "") if stored else ""
    if kind != "" and kind not in SENDER_KINDS:
        raise EnvelopeError("sender_kind is not a known kind")
    assert isinstance(kind, str)
    client, ssh = ("", "") if stored else (obj.get("sender_client", ""), obj.get("sender_ssh", ""))
    for key, label in (("sender_client", client), ("sender_ssh", ssh)):
        if label != "" and not is_client_label(label):
            raise EnvelopeError(f"{key} is not a client label")
    assert isinstance(client, str) and isinstance(ssh, str)
    delivery = checked_delivery(obj, EnvelopeError)
    return Envelope(
        message_id=message_id,
        target_instance_id=target,
        sender_instance_id=sender_id,
        sender_pid=sender_pid,
        sender_project=project,
        sender_workspace=workspace,
        body=body,
        created_at=created_at,
        sender_kind=kind,
        sender_client=client,
        sender_ssh=ssh,
        delivery=delivery,
    )


# --- acknowledgements --------------------------------------------------------------------


@dataclass(frozen=True)
class Ack:
    message_id: str
    status: str
    queue_position: int = 0
    state: str = "ready"
    # Why a request was refused, when the receiver says (an extra scalar member after the
    # spec's, which zcoder.zsh's flat parser ignores); "" for every other ack.
    reason: str = ""
    # What the receiver does with an enqueue that asked for STEER: STEER (it reaches the
    # running turn) or QUEUE; "" (not written) for every other request.
    delivery: str = ""

    def to_payload(self) -> bytes:
        # Every ack a listener writes is one of these: an id of the message-id grammar (or
        # none), a status and a state of the protocol's words. Their JSON is the text
        # itself, so the bytes are built directly: encode_flat_object gives the same bytes
        # (tests/relay/test_protocol.py) at several times the cost, once per request.
        position = self.queue_position
        if (
            not self.reason
            and not self.delivery
            and self.status in STATUSES
            and self.state in STATES
            and type(position) is int
            and (not self.message_id or MESSAGE_ID_RE.fullmatch(self.message_id))
        ):
            return (
                f'{{"protocol":{PROTOCOL_VERSION},"type":"ack","message_id":"{self.message_id}",'
                f'"status":"{self.status}","queue_position":{position},"state":"{self.state}"}}'
            ).encode("ascii")
        members: dict[str, Scalar] = {
            "protocol": PROTOCOL_VERSION,
            "type": "ack",
            "message_id": self.message_id,
            "status": self.status,
            "queue_position": self.queue_position,
            "state": self.state,
        }
        if self.reason:
            members["reason"] = self.reason
        if self.delivery:
            members["delivery"] = self.delivery
        return encode_flat_object(members)


# An ack exactly as Ack.to_payload writes it (zcoder's listeners and zcoder.zsh's): read
# without the JSON decoder. Anything else (other key orders, escapes, spaces) is decoded.
_CANONICAL_ACK: Final = re.compile(
    rb'\{"protocol":1,"type":"ack","message_id":"([A-Za-z0-9_.-]{0,100})",'
    rb'"status":"([a-z_]{1,20})","queue_position":(0|[1-9][0-9]{0,17}),"state":"([a-z]{1,10})"\}'
)


def parse_ack(payload: bytes) -> Ack:
    """Parse a response payload; raises FrameError when it is not a version-1 ack."""
    canonical = _CANONICAL_ACK.fullmatch(payload)
    if canonical is not None:
        status, state = canonical[2].decode("ascii"), canonical[4].decode("ascii")
        if status in STATUSES:
            return Ack(
                canonical[1].decode("ascii"),
                status,
                int(canonical[3]),
                state if state in STATES else "ready",
            )
    return ack_from_object(decode_flat_object(payload))


def ack_from_object(obj: FlatObject) -> Ack:
    """The ack a decoded response payload says; raises FrameError when it is not one."""
    if obj.get("protocol") != PROTOCOL_VERSION or isinstance(obj.get("protocol"), bool):
        raise FrameError("acknowledgement is not protocol 1")
    if obj.get("type") != "ack":
        raise FrameError("response is not an acknowledgement")
    status = obj.get("status")
    if status not in STATUSES:
        raise FrameError(f"acknowledgement has an unknown status {status!r}")
    assert isinstance(status, str)
    message_id = obj.get("message_id", "")
    if not isinstance(message_id, str):
        raise FrameError("acknowledgement message_id is not a string")
    position = obj.get("queue_position", 0)
    if not isinstance(position, int) or isinstance(position, bool) or position < 0:
        position = 0
    state = obj.get("state", "ready")
    if state not in STATES:
        state = "ready"
    assert isinstance(state, str)
    reason = obj.get("reason", "")
    reason = reason[:MAX_ACK_REASON_CHARS] if isinstance(reason, str) else ""
    delivery = obj.get("delivery", "")
    return Ack(
        message_id=message_id,
        status=status,
        queue_position=position,
        state=state,
        reason=reason,
        delivery=delivery if delivery in DELIVERIES else "",
    )
