"""The framing between zcoder and its listener process: one JSON object per line.

JSON as ``json.dumps`` writes it (ASCII only) never holds a raw newline, so a line is a
message. Both sides read with ``LineReader``; the child writes its events with
``EventWriter``, which never blocks its loop.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any, Final

MAX_LINE: Final = 4 << 20  # a command or event line (a stored payload is at most 1 MiB)


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True).encode() + b"\n"


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

    Nudges ("messages wait") also merge in time: the first goes at once, later ones at
    most every NUDGE_INTERVAL, so a burst of messages wakes the parent a few times, not
    once per message (``due`` says when the loop must flush the one held back)."""

    MAX_WAITING: Final = 1 << 20
    NUDGE_INTERVAL: Final = 0.02

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

    def send(self, event: dict[str, Any]) -> None:
        kind = event["op"]
        if kind == "accepted":
            self._nudge = True
        elif kind == "log" and len(self._waiting) > self.MAX_WAITING // 2:
            self.dropped_logs += 1
        else:
            if self._nudge:  # events stay in order: a nudge held back goes first
                self._waiting += encode({"op": "accepted"})
                self._nudge, self._nudged_at = False, self._clock()
            self._waiting += encode(event)
        self.flush()

    def flush(self) -> bool:
        """Write what waits (a nudge once it is due); True when nothing is left to write."""
        if self._nudge:
            now = self._clock()
            if now >= self._nudged_at + self.NUDGE_INTERVAL:
                self._waiting += encode({"op": "accepted"})
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
