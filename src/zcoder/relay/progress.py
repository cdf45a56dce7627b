"""Progress: a receiver tells the sender of a task where it stands before its receipt.

Besides the final receipt (zcoder.relay.receipts), the receiver sends the task's sender a
``progress`` request when the model starts on the task:

    {"protocol":1,"type":"progress","message_id":"<receiver id>-p<n>",
     "target_instance_id":"<the task's sender>","sender_instance_id":"<receiver id>",
     "sender_pid":<receiver pid>,"in_reply_to":"<the task's message id>",
     "stage":"started","created_at":<epoch s>}

``stage`` is ``started`` (the model started on the message, as a turn of its own) or
``steered`` (the message reached a turn that was running). The sender judges it as it
judges a receipt (zcoder.relay.receipts.ReceiptBook): ``in_reply_to`` must be a message
THIS instance sent, to exactly that sender, with no receipt yet; each stage comes at most
once per message (``duplicate`` after). zcoder.zsh answers ``unsupported``: that peer is
then sent neither progress nor receipts again, silently. Progress never starts a turn and
cannot be answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from zcoder.base.errors import ZcoderError
from zcoder.relay.protocol import (
    Addressed,
    FlatObject,
    checked_member,
    checked_sender,
    is_message_id,
)

STARTED: Final = "started"
STEERED: Final = "steered"
STAGES: Final = (STARTED, STEERED)


class ProgressError(ZcoderError, ValueError):
    """A progress request that fails validation; the message says why."""


@dataclass(frozen=True)
class Progress(Addressed):
    """A receiver's word that the model started on a task (handed to zcoder's process)."""

    TYPE: ClassVar[str] = "progress"
    TO_PARENT: ClassVar[bool] = True
    in_reply_to: str
    stage: str
    created_at: int | float | None = None

    def to_payload(self) -> bytes:
        return self.encoded(
            {"in_reply_to": self.in_reply_to, "stage": self.stage},
            {"created_at": self.created_at},
        )


Answered = tuple[str, str, str, int, str, int | float | None]


def checked_answer(obj: FlatObject, error: type[ValueError]) -> Answered:
    """What a receipt and a progress share, checked (the caller checked protocol, target
    and type; the sender and ``in_reply_to`` are checked afterwards): message_id,
    target_instance_id, sender_instance_id, sender_pid, in_reply_to, created_at."""
    message_id, sender, pid = checked_sender(obj, error)
    in_reply_to = checked_member(obj, "in_reply_to", is_message_id, error, "is not a message id")
    created_at = obj.get("created_at")
    if not isinstance(created_at, (int, float)) or isinstance(created_at, bool):
        created_at = None
    target = obj.get("target_instance_id")
    assert isinstance(target, str)
    return message_id, target, sender, pid, in_reply_to, created_at


def validate_progress(obj: FlatObject) -> Progress:
    """Every check a progress request's own members must pass."""
    message_id, target, sender, pid, in_reply_to, created_at = checked_answer(obj, ProgressError)
    stage = obj.get("stage")
    if stage not in STAGES:
        raise ProgressError(f"stage must be one of {', '.join(STAGES)}")
    assert isinstance(stage, str)
    return Progress(message_id, target, sender, pid, in_reply_to, stage, created_at)
