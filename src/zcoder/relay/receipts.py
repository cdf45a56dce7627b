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
from dataclasses import dataclass, field
from typing import ClassVar, Final, TypeVar

from zcoder.base.errors import ZcoderError
from zcoder.relay.progress import Progress, checked_answer
from zcoder.relay.protocol import (
    Addressed,
    FlatObject,
    optional_text,
)
from zcoder.relay.watches import IdleNotice, Waiters, subscribe_once

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
class Receipt(Addressed):
    """A receiver's word on what became of a task (handed to zcoder's process)."""

    TYPE: ClassVar[str] = "receipt"
    TO_PARENT: ClassVar[bool] = True
    in_reply_to: str
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
    message_id, target, sender, pid, in_reply_to, created_at = checked_answer(obj, ReceiptError)
    outcome = obj.get("outcome")
    if outcome not in OUTCOMES:
        raise ReceiptError(f"outcome must be one of {', '.join(OUTCOMES)}")
    assert isinstance(outcome, str)
    summary = optional_text(obj, "summary", SUMMARY_MAX_CHARS, ReceiptError)
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
    stages: list[str] = field(default_factory=list)  # its progress (zcoder.relay.progress)
    # A watch (zcoder.relay.watches) is a message sent too: its answer is an idle notice.
    watch: bool = False
    idle: IdleNotice | None = None


_Once = TypeVar("_Once", Receipt, IdleNotice)


class ReceiptBook:
    """The sent messages that may get a receipt (and progress before it), and the receipts
    and progress received, thread-safe.

    The listener thread calls ``accept`` and ``accept_progress``; the app's thread
    ``record_sent``, ``take`` and ``take_progress``.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._sent: collections.OrderedDict[str, SentMessage] = collections.OrderedDict()
        self._inbox: collections.deque[tuple[Receipt, SentMessage]] = collections.deque(
            maxlen=INBOX_MAX
        )
        self._progress: collections.deque[tuple[Progress, SentMessage]] = collections.deque(
            maxlen=INBOX_MAX
        )
        self._receiptless: set[str] = set()
        self._idle: collections.deque[tuple[IdleNotice, SentMessage]] = collections.deque(
            maxlen=INBOX_MAX
        )
        # Who waits for a message's receipt or a watch's notice (subscribe).
        self._waiters: Waiters[Receipt | IdleNotice] = Waiters()

    def record_sent(
        self,
        message_id: str,
        target_instance_id: str,
        target_label: str,
        body: str,
        *,
        watch: bool = False,
    ) -> None:
        with self._lock:
            now = self._clock()
            self._sent[message_id] = SentMessage(
                message_id, target_instance_id, target_label, body[:200], now, watch=watch
            )
            while self._sent and (
                len(self._sent) > SENT_LOG_MAX
                or next(iter(self._sent.values())).sent_at < now - SENT_LOG_MAX_AGE
            ):
                self._sent.popitem(last=False)

    def forget(self, message_id: str) -> None:
        """A message that was not accepted: no receipt will come for it."""
        with self._lock:
            self._sent.pop(message_id, None)

    def _answered(self, in_reply_to: str, sender: str) -> SentMessage | str:
        """The sent message a receipt or progress from ``sender`` answers, or why none."""
        sent = self._sent.get(in_reply_to)
        if sent is None:
            return "in_reply_to is not a message this instance sent"
        if sent.target_instance_id != sender:
            return "the message was not sent to this sender"
        return sent

    def accept(self, receipt: Receipt) -> tuple[str, str]:
        """(ack status, reason): ``accepted``, ``duplicate`` or ``invalid``."""
        return self._accept_once(receipt, "receipt", self._inbox)

    def accept_idle(self, notice: IdleNotice) -> tuple[str, str]:
        """(ack status, reason): ``accepted`` for a watch this instance sent to the
        notice's sender, once; the same notice again ``duplicate``; else ``invalid``."""
        return self._accept_once(notice, "idle", self._idle)

    def _accept_once(
        self,
        answer: _Once,
        slot: str,
        inbox: collections.deque[tuple[_Once, SentMessage]],
    ) -> tuple[str, str]:
        """The one ``answer`` a message sent may get (a receipt for a task, an idle notice
        for a watch), kept in its entry's ``slot`` and in ``inbox``; who waits for it
        (``subscribe``) is told after."""
        called = "receipt" if slot == "receipt" else "notice"
        with self._lock:
            sent = self._answered(answer.in_reply_to, answer.sender_instance_id)
            if isinstance(sent, str):
                return "invalid", sent
            if sent.watch != (slot == "idle"):
                return "invalid", f"that message takes no {called}"
            earlier = getattr(sent, slot)
            if earlier is not None:
                if earlier.message_id == answer.message_id:
                    return "duplicate", f"this {called} was received already"
                return "invalid", f"that message has a {called} already"
            setattr(sent, slot, answer)
            inbox.append((answer, sent))
            callbacks = self._waiters.pop(answer.in_reply_to)
        for callback in callbacks:
            callback(answer)
        return "accepted", ""

    def subscribe(
        self, message_id: str, callback: Callable[[Receipt | IdleNotice], None]
    ) -> Callable[[], None]:
        """``callback`` gets the message's receipt (a watch's notice) once it comes: at
        once, on this thread, when it came already; else on the thread that accepts it.
        Returns the call that stops waiting."""

        def present() -> Receipt | IdleNotice | None:
            sent = self._sent.get(message_id)
            return None if sent is None else sent.idle if sent.watch else sent.receipt

        return subscribe_once(self._lock, self._waiters, message_id, present, callback)

    def take_idle(self) -> list[tuple[IdleNotice, SentMessage]]:
        """The idle notices received since the last call, oldest first."""
        with self._lock:
            taken = list(self._idle)
            self._idle.clear()
            return taken

    def accept_progress(self, progress: Progress) -> tuple[str, str]:
        """(ack status, reason): ``accepted``; ``duplicate`` for a stage the message had;
        ``invalid`` when it answers no message sent to its sender, or one with a receipt."""
        with self._lock:
            sent = self._answered(progress.in_reply_to, progress.sender_instance_id)
            if isinstance(sent, str):
                return "invalid", sent
            if sent.receipt is not None:
                return "invalid", "that message has a receipt already"
            if progress.stage in sent.stages:
                return "duplicate", f"that message was {progress.stage} already"
            sent.stages.append(progress.stage)
            self._progress.append((progress, sent))
            return "accepted", ""

    def take_progress(self) -> list[tuple[Progress, SentMessage]]:
        """The progress received since the last call, oldest first."""
        with self._lock:
            taken = list(self._progress)
            self._progress.clear()
            return taken

    def take(self) -> list[tuple[Receipt, SentMessage]]:
        """The receipts received since the last call, oldest first."""
        with self._lock:
            taken = list(self._inbox)
            self._inbox.clear()
            return taken

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
