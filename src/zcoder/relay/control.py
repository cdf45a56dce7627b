"""The messages between zcoder and its listener process, and their framing: one JSON
object per line, ``{"op": <OP>, <the message's fields>...}``.

Each message is one dataclass: a ``ListenerCommand`` (zcoder's process to the listener process,
answered by one reply: ``{"ok": true, ...}`` or ``{"error": ...}``) or an ``Event`` (the
listener process to zcoder's, never answered). Each side dispatches what it reads through
a ``{class: handler}`` table (zcoder.relay.listener_service.ListenerService.HANDLERS and
zcoder.relay.listener_process.ListenerProcess.HANDLERS); tests/relay/test_messages.py
checks every class has its row. A new message is one class here and one row there.

JSON as ``json.dumps`` writes it (ASCII only) never holds a raw newline, so a line is a
message. Both sides read with ``LineReader``; the child writes its events with
``EventWriter``, which never blocks its loop.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Self, TypeVar, dataclass_transform

MAX_LINE: Final = 4 << 20  # a command or event line (a stored payload is at most 1 MiB)


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True).encode() + b"\n"


@dataclass_transform(frozen_default=True)
class Message:
    """A command or an event: ``OP`` names it on the line; its dataclass fields follow.

    ``class Name(ListenerCommand, op="name")`` declares one: a frozen dataclass, found by its op
    in ``ListenerCommand.BY_OP`` (or ``Event.BY_OP``) from then on."""

    OP: ClassVar[str]
    BY_OP: ClassVar[dict[str, Any]]  # ListenerCommand's and Event's: each a table of its own
    __dataclass_fields__: ClassVar[dict[str, Any]]  # each message is a dataclass

    def __init_subclass__(cls, *, op: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not op:
            return
        if op in cls.BY_OP:
            raise TypeError(f"two messages are called {op!r}")
        cls.OP = op
        dataclass(frozen=True)(cls)
        cls.BY_OP[op] = cls

    def fields(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def line(self) -> bytes:
        return encode({"op": self.OP, **self.fields()})

    @classmethod
    def from_fields(cls, line: Mapping[str, Any]) -> Self:
        """The message a decoded line holds; ValueError when a field is missing. A string
        field takes the value as a string, as the old readers did; others as they are."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name in line:
                value = line[f.name]
                values[f.name] = str(value) if f.type == "str" else value
            elif f.default is dataclasses.MISSING:
                raise ValueError(f"{cls.OP} without {f.name}")
        return cls(**values)


class ListenerCommand(Message):
    """zcoder's process to its listener process; each is answered by one reply."""

    BY_OP: ClassVar[dict[str, type[ListenerCommand]]] = {}


class Event(Message):
    """The listener process to zcoder's, never answered."""

    BY_OP: ClassVar[dict[str, type[Event]]] = {}


_M = TypeVar("_M", bound=Message)


def decode(line: Mapping[str, Any], by_op: Mapping[str, type[_M]]) -> _M | None:
    """The message of ``by_op`` a decoded line holds (None: an op there is none for).
    Raises ValueError when a field is missing."""
    kind = by_op.get(str(line.get("op")))
    return None if kind is None else kind.from_fields(line)


# -- commands ---------------------------------------------------------------------------


class Configure(ListenerCommand, op="config"):
    """The listener's configuration and the state as it is now: first, once."""

    settings: dict[str, Any]

    def fields(self) -> dict[str, Any]:
        return self.settings

    @classmethod
    def from_fields(cls, line: Mapping[str, Any]) -> Self:
        return cls({key: value for key, value in line.items() if key != "op"})


class SetState(ListenerCommand, op="state"):
    """ready, busy or paused; applied before the reply (so a message that arrives after
    ``pause()`` returned is answered ``paused``)."""

    state: str


class MessageSent(ListenerCommand, op="sent"):
    """A message zcoder sent: a receipt may answer it."""

    message_id: str
    target: str


class WatchSent(ListenerCommand, op="watch_sent"):
    """A watch zcoder sent (zcoder.relay.watches): an ``idle`` notice may answer it."""

    message_id: str
    target: str


class Forget(ListenerCommand, op="forget"):
    """A message (or watch) sent that was not accepted: nothing will answer it."""

    message_id: str


class Store(ListenerCommand, op="store"):
    """A message recovered from a dead instance, re-addressed to this one, to queue."""

    payload: str


class LastAccepted(ListenerCommand, op="sequence"):
    """The sequence number of the last message accepted (``last_accepted``)."""


class Sync(ListenerCommand, op="sync"):
    """Answered, and followed by a ``Synced`` event with the same token."""

    token: object = None


class SpoolDone(ListenerCommand, op="done"):
    """A spool entry done, discarded or quarantined by zcoder: its queue slot is free."""

    name: str = ""


class Stats(ListenerCommand, op="stats"):
    """Connections served, open and refused."""


class Stop(ListenerCommand, op="stop"):
    """End the listener (zcoder does not wait for the reply)."""


# -- events -----------------------------------------------------------------------------


class Accepted(Event, op="accepted"):
    """A nudge: messages wait in the spool."""


class Forwarded(Event, op="forwarded"):
    """A request the listener accepted for zcoder's process (a ``TO_PARENT`` type of
    zcoder.relay.protocol.Request), as its payload; ``kind`` is its wire type."""

    kind: str = ""
    payload: str = ""


class Log(Event, op="log"):
    """A line for zcoder's log."""

    level: object = None
    name: str = ""
    message: str = ""


class Synced(Event, op="synced"):
    """Every event before this one was sent (the answer to ``Sync``)."""

    token: object = None


class Died(Event, op="died"):
    """Why the listener's loop stopped (the process ends next)."""

    reason: str = ""


ACCEPTED: Final = Accepted()
_ACCEPTED_LINE: Final = ACCEPTED.line()


class LineReader:
    """Whole lines from a socket, blocking or not (``lines`` returns what is there)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = bytearray()
        self.closed = False

    def lines(self) -> list[dict[str, Any]]:
        """Read once; every whole line there is, decoded. ``closed`` after end of file."""
        try:
            chunk = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return []
        if not chunk:
            self.closed = True
        self._buffer += chunk
        if len(self._buffer) > MAX_LINE and b"\n" not in self._buffer:
            raise ValueError("a control line is too long")
        found: list[dict[str, Any]] = []
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            value = json.loads(line)
            if not isinstance(value, dict):
                raise ValueError("a control line is not an object")
            found.append(value)
        return found


class EventWriter:
    """The child's events, written without ever blocking the loop: when the parent does
    not read (stopped with Ctrl+Z, say), nudges merge into one, log lines are counted and
    dropped, and receipts wait (they are few: one per message sent).

    Nudges ("messages wait") also merge in time: the first goes FIRST_NUDGE_DELAY after
    its message, later ones at most every NUDGE_INTERVAL, so a burst of messages wakes the
    parent a few times, not once per message (``due`` says when the loop must flush the one
    held back). The first waits because the sender has just been answered: a parent woken
    at that moment competes with the sender for a CPU (on two cores, a spaced enqueue took
    a tenth longer), and a message that waits two milliseconds more loses nothing."""

    MAX_WAITING: Final = 1 << 20
    NUDGE_INTERVAL: Final = 0.02
    FIRST_NUDGE_DELAY: Final = 0.002

    def __init__(self, sock: socket.socket, clock: Callable[[], float] = time.monotonic) -> None:
        self.sock = sock
        sock.setblocking(False)
        self._waiting = bytearray()
        self._nudge = False
        self._clock = clock
        self._nudged_at = -1.0
        self.dropped_logs = 0

    def due(self) -> float | None:
        """Seconds until a held-back nudge is due (None: none is held back)."""
        if not self._nudge:
            return None
        return max(0.0, self._nudged_at + self.NUDGE_INTERVAL - self._clock())

    def send(self, event: Event) -> None:
        kind = type(event)
        if kind is Accepted:
            if not self._nudge:
                now = self._clock()
                # The first of a burst waits FIRST_NUDGE_DELAY: out of the sender's way.
                self._nudged_at = max(
                    self._nudged_at, now - self.NUDGE_INTERVAL + self.FIRST_NUDGE_DELAY
                )
            self._nudge = True
        elif kind is Log and len(self._waiting) > self.MAX_WAITING // 2:
            self.dropped_logs += 1
        else:
            if self._nudge:  # events stay in order: a nudge held back goes first
                self._waiting += _ACCEPTED_LINE
                self._nudge, self._nudged_at = False, self._clock()
            self._waiting += event.line()
        self.flush()

    def flush(self) -> bool:
        """Write what waits (a nudge once it is due); True when nothing is left to write."""
        if self._nudge:
            now = self._clock()
            if now >= self._nudged_at + self.NUDGE_INTERVAL:
                self._waiting += _ACCEPTED_LINE
                self._nudge = False
                self._nudged_at = now
        while self._waiting:
            try:
                sent = self.sock.send(self._waiting)
            except (BlockingIOError, InterruptedError):
                return False
            except OSError:
                self._waiting.clear()  # the parent is gone: the command channel says so
                return True
            del self._waiting[:sent]
        return True
