"""Receipts: a receiver tells the sender of a task what became of it.

When a relayed turn ends, the receiver sends the task's sender one ``receipt``:

    {"protocol":1,"type":"receipt","message_id":"<receiver id>-r<n>",
     "target_instance_id":"<the task's sender>","sender_instance_id":"<receiver id>",
     "sender_pid":<receiver pid>,"in_reply_to":"<the task's message id>",
     "outcome":"completed","summary":"<at most 2,000 characters>","created_at":<epoch s>}

A flat object of scalars, as every request is. The sender answers with an ordinary ack:
``accepted``, ``duplicate`` (a second receipt for the same task), ``invalid`` (it fails a
check below), and zcoder.zsh, which has no receipts, ``unsupported``: that peer is then
remembered as receipt-less and never sent one again (no error is shown).

A receipt is accepted only when every check passes: protocol 1; this instance is the
target; ``message_id`` of the message grammar and beginning with ``<sender_instance_id>-``;
the sender a registered live instance whose pid is ``sender_pid``, connecting from its
own session (the same sender check as an enqueue); ``in_reply_to`` a message THIS instance
sent, to exactly that sender, with no receipt yet; ``outcome`` one of OUTCOMES; ``summary``
a string of at most SUMMARY_MAX_CHARS characters. So nobody can forge a receipt for a task
sent elsewhere, or for nothing, and each task gets at most one.

A receipt never starts a turn and cannot be answered: the app shows it and adds it to its
model's context as a labelled, self-reported record. Nothing can loop on it.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Final

from zcoder.base.errors import ZcoderError
from zcoder.relay.protocol import (
    FlatObject,
    checked_member,
    checked_sender,
    is_message_id,
    optional_text,
)
from zcoder.relay.watches import Answer, Replies

OUTCOMES: Final = ("completed", "failed", "cancelled", "refused", "discarded")
SUMMARY_MAX_CHARS: Final = 2000
# Messages this instance sent and may get a receipt for: the newest, for a day.
SENT_LOG_MAX: Final = 1024
SENT_LOG_MAX_AGE: Final = 24 * 3600.0
# Receipts received and not yet shown by the app.
INBOX_MAX: Final = 256


class ReceiptError(ZcoderError, ValueError):
    """A receipt that fails validation; the message says why (never sent on the wire)."""


@dataclass(frozen=True)
class Receipt(Answer):
    """A receiver's word on what became of a task (handed to zcoder's process)."""

    TYPE: ClassVar[str] = "receipt"
    TO_PARENT: ClassVar[bool] = True
    outcome: str
    summary: str
    created_at: int | float | None = None

    def to_payload(self) -> bytes:
        return self.encoded(
            {"in_reply_to": self.in_reply_to, "outcome": self.outcome, "summary": self.summary},
            {"created_at": self.created_at},
        )


def clip_summary(text: str) -> str:
    """A summary within SUMMARY_MAX_CHARS characters (cut with an ellipsis)."""
    text = text.strip()
    if len(text) <= SUMMARY_MAX_CHARS:
        return text
    return text[: SUMMARY_MAX_CHARS - 1] + "…"


def validate_receipt(obj: FlatObject) -> Receipt:
    """Every check a receipt's own members must pass (the caller checked protocol, target
    and type, and checks the sender and ``in_reply_to`` afterwards)."""
    message_id, sender, pid = checked_sender(obj, ReceiptError)
    in_reply_to = checked_member(
        obj, "in_reply_to", is_message_id, ReceiptError, "is not a message id"
    )
    outcome = obj.get("outcome")
    if outcome not in OUTCOMES:
        raise ReceiptError(f"outcome must be one of {', '.join(OUTCOMES)}")
    assert isinstance(outcome, str)
    summary = optional_text(obj, "summary", SUMMARY_MAX_CHARS, ReceiptError)
    created_at = obj.get("created_at")
    if not isinstance(created_at, (int, float)) or isinstance(created_at, bool):
        created_at = None
    target = obj.get("target_instance_id")
    assert isinstance(target, str)
    return Receipt(message_id, target, sender, pid, in_reply_to, outcome, summary, created_at)


@dataclass
class SentMessage:
    """A message this instance sent: to whom, and its receipt once one came."""

    message_id: str
    target_instance_id: str
    target_label: str  # the peer's name or project when it was sent, for display
    body_preview: str
    sent_at: float  # time.time()
    receipt: Receipt | None = None


class ReceiptBook:
    """The sent messages that may get a receipt, and the receipts received, thread-safe.

    The listener thread calls ``accept``; the app's thread ``record_sent`` and ``take``.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._sent: collections.OrderedDict[str, SentMessage] = collections.OrderedDict()
        self._inbox: collections.deque[tuple[Receipt, SentMessage]] = collections.deque(
            maxlen=INBOX_MAX
        )
        self._receiptless: set[str] = set()
        self._replies = Replies[Receipt](  # one receipt per message sent, and who waits
            self._lock, self._sent, self._inbox, "receipt", "message", "receipt"
        )

    def record_sent(
        self, message_id: str, target_instance_id: str, target_label: str, body: str
    ) -> None:
        with self._lock:
            now = self._clock()
            self._sent[message_id] = SentMessage(
                message_id, target_instance_id, target_label, body[:200], now
            )
            while self._sent and (
                len(self._sent) > SENT_LOG_MAX
                or next(iter(self._sent.values())).sent_at < now - SENT_LOG_MAX_AGE
            ):
                self._sent.popitem(last=False)

    def forget(self, message_id: str) -> None:
        """A message that was not accepted: no receipt will come for it."""
        self._replies.forget(message_id)

    def accept(self, receipt: Receipt) -> tuple[str, str]:
        """(ack status, reason): ``accepted``, ``duplicate`` or ``invalid``."""
        return self._replies.accept(receipt)

    def subscribe(self, message_id: str, callback: Callable[[Receipt], None]) -> Callable[[], None]:
        """``callback`` gets the message's receipt once it comes (at once if it has, on
        this thread; else on the thread that accepts it); returns the call that stops it."""
        return self._replies.subscribe(message_id, callback)

    def take(self) -> list[tuple[Receipt, SentMessage]]:
        """The receipts received since the last call, oldest first."""
        return self._replies.take()

    def arrived(self, payload: bytes) -> bool:
        """A receipt the listener process accepted, judged again (Replies.arrived)."""
        return self._replies.arrived(payload, validate_receipt)

    def mark_receiptless(self, instance_id: str) -> None:
        with self._lock:
            self._receiptless.add(instance_id)

    def is_receiptless(self, instance_id: str) -> bool:
        with self._lock:
            return instance_id in self._receiptless

    def sent(self) -> list[SentMessage]:
        """The messages sent (newest last), with their receipts where one came."""
        with self._lock:
            return list(self._sent.values())
