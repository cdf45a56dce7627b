"""Watches: one instance asks another to say, once, when it is next idle.

The watcher A sends B a ``watch``; B's listener process keeps it and, the moment B is idle
(its state ``ready`` and nothing in its queue: inbox and processing empty; held messages
wait for B's user and do not count), sends A one ``idle`` notice and forgets the watch.
When B is idle as the watch arrives, the notice goes at once.

    {"protocol":1,"type":"watch","message_id":"<A>-w<n>","target_instance_id":"<B>",
     "sender_instance_id":"<A>","sender_pid":<A's pid>,"created_at":<epoch s>}
    {"protocol":1,"type":"idle","message_id":"<B>-i<n>","target_instance_id":"<A>",
     "sender_instance_id":"<B>","sender_pid":<B's pid>,"in_reply_to":"<the watch's id>",
     "created_at":<epoch s>}

Both are answered with an ordinary ack. A watch is ``accepted``, ``duplicate`` (a retry),
``full`` (MAX_WATCHES_PER_WATCHER from one watcher, or MAX_WATCHES in all, are waiting), or
``invalid``; zcoder.zsh answers ``unsupported``: that peer cannot notify. An ``idle`` notice
is accepted only when ``in_reply_to`` is a watch THIS instance sent, to exactly that
sender, that has had no notice yet (the same rules as receipts, zcoder.relay.receipts).

A watch ends after WATCH_MAX_AGE, when it fires, when B exits (its watches live in its
listener process), and when A is gone: B checks that the watcher is still a live
registered instance before it sends, and drops a dead watcher's watches.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Generic, TypeVar

from zcoder.base.errors import ZcoderError
from zcoder.relay.protocol import (
    Addressed,
    FlatObject,
    checked_member,
    checked_sender,
    decode_flat_object,
    is_message_id,
)

log = logging.getLogger("zcoder.relay.instance")  # as Relay's: one log for the relay

WATCH_MAX_AGE: Final = 12 * 3600.0
MAX_WATCHES_PER_WATCHER: Final = 16
MAX_WATCHES: Final = 256
# Watch ids already taken (for ``duplicate``), and watches sent remembered by the watcher.
SEEN_MAX: Final = 1024
NOTICES_MAX: Final = 256


class WatchError(ZcoderError, ValueError):
    """A watch or an idle notice that fails validation; the message says why."""


def _created_at(obj: FlatObject) -> int | float | None:
    created_at = obj.get("created_at")
    if not isinstance(created_at, int | float) or isinstance(created_at, bool):
        return None
    return created_at


@dataclass(frozen=True)
class Answer(Addressed):
    """A request answering one this instance sent (a receipt, an idle notice): the id of
    what it answers follows the sender's pid."""

    in_reply_to: str


@dataclass(frozen=True)
class Watch(Addressed):
    """Ask the target to send one ``idle`` notice when it is next idle. The target's
    listener keeps it and hands it to zcoder's process once it is due: the notice must
    come from the registered process itself (the sender check), not from its listener."""

    TYPE: ClassVar[str] = "watch"
    TO_PARENT: ClassVar[bool] = True
    created_at: int | float | None = None

    def to_payload(self) -> bytes:
        return self.encoded({}, {"created_at": self.created_at})


@dataclass(frozen=True)
class IdleNotice(Answer):
    """The watched instance is idle now (handed to zcoder's process)."""

    TYPE: ClassVar[str] = "idle"
    TO_PARENT: ClassVar[bool] = True
    created_at: int | float | None = None

    def to_payload(self) -> bytes:
        return self.encoded({"in_reply_to": self.in_reply_to}, {"created_at": self.created_at})


def _target(obj: FlatObject) -> str:
    target = obj.get("target_instance_id")
    assert isinstance(target, str)  # the receiver checked it is this instance
    return target


def validate_watch(obj: FlatObject) -> Watch:
    message_id, sender, pid = checked_sender(obj, WatchError)
    return Watch(message_id, _target(obj), sender, pid, _created_at(obj))


def validate_idle(obj: FlatObject) -> IdleNotice:
    message_id, sender, pid = checked_sender(obj, WatchError)
    in_reply_to = checked_member(
        obj, "in_reply_to", is_message_id, WatchError, "is not a message id"
    )
    return IdleNotice(message_id, _target(obj), sender, pid, in_reply_to, _created_at(obj))


# -- the watched side (in the listener process) -----------------------------------------


class WatchBook:
    """The watches on this instance, waiting for it to be idle. One thread uses it (the
    listener's loop). ``alive`` says whether a watch's watcher is still a live registered
    instance; dead watchers' watches are dropped before the book answers ``full``."""

    def __init__(
        self, alive: Callable[[Watch], bool], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._alive = alive
        self._clock = clock
        self._watches: dict[str, tuple[Watch, float]] = {}
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()

    def __len__(self) -> int:
        self._expire()
        return len(self._watches)

    def add(self, watch: Watch) -> tuple[str, str]:
        """(ack status, reason): ``accepted``, ``duplicate`` or ``full``."""
        if watch.message_id in self._seen:
            return "duplicate", "this watch was received already"
        self._expire()
        if self._over(watch):
            self._watches = {k: v for k, v in self._watches.items() if self._alive(v[0])}
            if self._over(watch):
                return "full", "too many watches wait for this instance to be idle"
        self._watches[watch.message_id] = (watch, self._clock())
        self._seen[watch.message_id] = None
        while len(self._seen) > SEEN_MAX:
            self._seen.popitem(last=False)
        return "accepted", ""

    def _over(self, watch: Watch) -> bool:
        watcher = watch.sender_instance_id
        mine = sum(1 for w, _ in self._watches.values() if w.sender_instance_id == watcher)
        return mine >= MAX_WATCHES_PER_WATCHER or len(self._watches) >= MAX_WATCHES

    def _expire(self) -> None:
        oldest = self._clock() - WATCH_MAX_AGE
        for key in [k for k, (_, since) in self._watches.items() if since < oldest]:
            del self._watches[key]

    def take_all(self) -> list[Watch]:
        """Every watch still in force, oldest first; the book is empty afterwards."""
        self._expire()
        taken = [watch for watch, _ in self._watches.values()]
        self._watches.clear()
        return taken


# -- the watcher's side -----------------------------------------------------------------

_V = TypeVar("_V")


class Waiters(Generic[_V]):
    """Callbacks waiting for one value per key (a receipt, a notice). Not locked: its
    owner calls it under the owner's own lock, and calls what ``pop`` returns after."""

    def __init__(self) -> None:
        self._waiting: dict[str, list[Callable[[_V], None]]] = {}

    def add(self, key: str, callback: Callable[[_V], None]) -> None:
        self._waiting.setdefault(key, []).append(callback)

    def discard(self, key: str, callback: Callable[[_V], None]) -> None:
        callbacks = self._waiting.get(key, [])
        if callback in callbacks:
            callbacks.remove(callback)
        if not callbacks:
            self._waiting.pop(key, None)

    def pop(self, key: str) -> list[Callable[[_V], None]]:
        return self._waiting.pop(key, [])


_R = TypeVar("_R", bound="Answer")


@dataclass(eq=False)
class Replies(Generic[_R]):
    """How a book of messages sent (receipts.ReceiptBook, SentWatches) takes the one reply
    each may get: ``entries`` by message id, each with ``target_instance_id`` and its reply
    in the attribute ``slot`` (None until it comes); ``inbox`` what was received and not yet
    taken. Its owner's ``lock`` guards them all. ``what`` and ``called`` name the message
    and the reply in the reasons."""

    lock: threading.Lock
    entries: MutableMapping[str, Any]
    inbox: collections.deque[tuple[_R, Any]]
    slot: str
    what: str
    called: str
    waiters: Waiters[_R] = field(default_factory=Waiters)

    def accept(self, reply: _R) -> tuple[str, str]:
        """(ack status, reason): ``accepted`` only for a message this instance sent, to
        exactly the reply's sender, once; the same reply again is ``duplicate``; else
        ``invalid``. Who waits for it (``subscribe``) is called after."""
        what, called = self.what, self.called
        with self.lock:
            sent = self.entries.get(reply.in_reply_to)
            if sent is None:
                return "invalid", f"in_reply_to is not a {what} this instance sent"
            if sent.target_instance_id != reply.sender_instance_id:
                return "invalid", f"the {what} was not sent to this {called}'s sender"
            earlier = getattr(sent, self.slot)
            if earlier is not None:
                if earlier.message_id == reply.message_id:
                    return "duplicate", f"this {called} was received already"
                return "invalid", f"that {what} has a {called} already"
            setattr(sent, self.slot, reply)
            self.inbox.append((reply, sent))
            callbacks = self.waiters.pop(reply.in_reply_to)
        for callback in callbacks:
            callback(reply)
        return "accepted", ""

    def forget(self, message_id: str) -> None:
        """A message that was not accepted: no reply will come for it."""
        with self.lock:
            self.entries.pop(message_id, None)

    def take(self) -> list[tuple[_R, Any]]:
        """The replies received since the last call, oldest first, each with its entry."""
        with self.lock:
            taken = list(self.inbox)
            self.inbox.clear()
            return taken

    def arrived(self, payload: bytes, validate: Callable[[FlatObject], _R]) -> bool:
        """A reply the listener process accepted, judged again here (zcoder's process keeps
        a book of its own); True when it was recorded (someone should look)."""
        try:
            reply = validate(decode_flat_object(payload))
        except ValueError as exc:  # FrameError, ReceiptError, WatchError
            log.warning(
                "relay listener passed on a %s that does not validate: %s", self.called, exc
            )
            return False
        status, reason = self.accept(reply)
        if status != "accepted":
            log.info("relay %s %s not recorded: %s", self.called, reply.message_id, reason)
            return False
        return True

    def subscribe(self, message_id: str, callback: Callable[[_R], None]) -> Callable[[], None]:
        """Call ``callback`` with the message's reply once there is one (at once, on this
        thread, when it came already; else on the thread that accepts it). Returns the
        call that stops waiting."""
        with self.lock:
            sent = self.entries.get(message_id)
            reply: _R | None = getattr(sent, self.slot) if sent is not None else None
            if reply is None:
                self.waiters.add(message_id, callback)
        if reply is not None:
            callback(reply)
            return lambda: None

        def unsubscribe() -> None:
            with self.lock:
                self.waiters.discard(message_id, callback)

        return unsubscribe


@dataclass
class SentWatch:
    """A watch this instance sent: to whom, and its notice once one came."""

    message_id: str
    target_instance_id: str
    target_label: str  # the peer's name when it was sent, for display
    notice: IdleNotice | None = None


class SentWatches:
    """The watches this instance sent and the notices that answer them, thread-safe: the
    listener's event thread calls ``accept``, the app ``record``, ``take`` and
    ``subscribe``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: collections.OrderedDict[str, SentWatch] = collections.OrderedDict()
        self._inbox: collections.deque[tuple[IdleNotice, SentWatch]] = collections.deque(
            maxlen=NOTICES_MAX
        )
        self._replies = Replies[IdleNotice](
            self._lock, self._sent, self._inbox, "notice", "watch", "notice"
        )

    def record(self, message_id: str, target_instance_id: str, target_label: str = "") -> None:
        with self._lock:
            self._sent[message_id] = SentWatch(message_id, target_instance_id, target_label)
            while len(self._sent) > SEEN_MAX:
                self._sent.popitem(last=False)

    def forget(self, message_id: str) -> None:
        """A watch that was not accepted: no notice will come for it."""
        self._replies.forget(message_id)

    def arrived(self, payload: bytes) -> bool:
        """A notice the listener process accepted, judged again (Replies.arrived)."""
        return self._replies.arrived(payload, validate_idle)

    def accept(self, notice: IdleNotice) -> tuple[str, str]:
        """(ack status, reason): ``accepted``, ``duplicate`` or ``invalid`` (Replies)."""
        return self._replies.accept(notice)

    def subscribe(
        self, message_id: str, callback: Callable[[IdleNotice], None]
    ) -> Callable[[], None]:
        """``callback`` gets the watch's notice once it comes (at once if it has)."""
        return self._replies.subscribe(message_id, callback)

    def take(self) -> list[tuple[IdleNotice, SentWatch]]:
        """The notices received since the last call, oldest first."""
        return self._replies.take()
