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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Final, Generic, TypeVar

from zcoder.base.errors import ZcoderError
from zcoder.relay.progress import checked_answer
from zcoder.relay.protocol import (
    Addressed,
    FlatObject,
    checked_sender,
)

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
class IdleNotice(Addressed):
    """The watched instance is idle now (handed to zcoder's process)."""

    TYPE: ClassVar[str] = "idle"
    TO_PARENT: ClassVar[bool] = True
    in_reply_to: str
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
    """Every check an idle notice's own members must pass (those a receipt's are)."""
    return IdleNotice(*checked_answer(obj, WatchError))


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


def subscribe_once(
    lock: threading.Lock,
    waiters: Waiters[_V],
    key: str,
    present: Callable[[], _V | None],
    callback: Callable[[_V], None],
) -> Callable[[], None]:
    """Call ``callback`` with the value for ``key`` once there is one (at once, on this
    thread, when ``present`` already has it; else on the thread that records it, which
    ``pop``s the waiters). Returns the call that stops waiting."""
    with lock:
        value = present()
        if value is None:
            waiters.add(key, callback)
    if value is not None:
        callback(value)
        return lambda: None

    def unsubscribe() -> None:
        with lock:
            waiters.discard(key, callback)

    return unsubscribe
