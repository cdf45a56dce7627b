"""The user's turns go first: a machine-wide queue, per model server on this machine,
among the user's zcoder instances (a server elsewhere gets no queue:
zcoder.agent.settings).

A local server runs a few requests at once (llama.cpp's slots, Ollama's
``OLLAMA_NUM_PARALLEL``) and queues the rest first come, first served; so a turn the
user just typed could wait behind the turns other agents relayed to their zcoders, or a
background goal. Every model request of a turn first takes a *place* at its server
here; there are as many places as the server runs requests at once (``places``: the
shared ``--gguf`` server's slots, else 1), and whoever waits for one is served in this
order:

* a turn the user started before a relayed or background one;
* among equals, the one that asked first;
* a relayed or background request that has waited ``AGING_SECONDS`` counts as the
  user's: it is never passed over for ever (no starvation);
* with more than one place, relayed and background requests leave the last place free
  for the user's, so the user's first token does not wait for theirs to end.

A place is an exclusive flock on ``place-N`` in the server's directory
(``$ZCODER_HOME/model-queue/<digest of the server's URL>/``), held while the reply
streams: one uncontended lock when nobody waits. A waiter holds a flock on its own ticket
file (``*.t``, named by its rank and the time it asked), so a waiter that was killed is
seen at once (its lock is free) and its ticket removed; only the first waiter in rank
order tries the places, every ``POLL_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from zcoder.base.flocks import lock_free, open_lock, take_first_free
from zcoder.base.safefile import ensure_private_dir

__all__ = ["AGING_SECONDS", "QUEUE_DIR", "TurnQueue"]

QUEUE_DIR: Final = "model-queue"
POLL_SECONDS: Final = 0.02
AGING_SECONDS: Final = 30.0
_TICKET: Final = ".t"
_USER, _BACKGROUND = "u", "b"


@dataclass(frozen=True)
class _Ticket:
    name: str
    kind: str
    asked_ns: int

    @classmethod
    def parse(cls, name: str) -> _Ticket | None:
        parts = name.removesuffix(_TICKET).split("-")
        if not name.endswith(_TICKET) or len(parts) != 4 or parts[0] not in (_USER, _BACKGROUND):
            return None
        try:
            return cls(name, parts[0], int(parts[1]))
        except ValueError:
            return None

    def rank(self, now_ns: int, aging_ns: int) -> tuple[int, int]:
        first = self.kind == _USER or now_ns - self.asked_ns >= aging_ns
        return (0 if first else 1, self.asked_ns)


class TurnQueue:
    """``async with queue.place(server, background=...)`` around one model request."""

    def __init__(self, home: Path, *, places: int = 1, aging: float = AGING_SECONDS) -> None:
        self.root = home / QUEUE_DIR
        self.places = max(1, places)
        self.aging_ns = int(aging * 1e9)

    def directory(self, server: str) -> Path:
        return self.root / hashlib.sha256(server.encode()).hexdigest()[:24]

    @asynccontextmanager
    async def place(self, server: str, *, background: bool) -> AsyncIterator[None]:
        """Hold a place at ``server`` for the body (see the module docstring)."""
        directory = self.directory(server)
        ensure_private_dir(directory)
        held = None if _tickets(directory) else self._take(directory, background, aged=False)
        if held is None:
            held = await self._wait(directory, background)
        try:
            yield
        finally:
            os.close(held)

    def _take(self, directory: Path, background: bool, *, aged: bool) -> int | None:
        """A free place this request may use (its lock's descriptor), or None."""
        usable = self.places - 1 if background and not aged and self.places > 1 else self.places
        taken = take_first_free([directory / f"place-{number}" for number in range(usable)])
        return None if taken is None else taken[1]

    async def _wait(self, directory: Path, background: bool) -> int:
        kind = _BACKGROUND if background else _USER
        asked = time.monotonic_ns()
        name = f"{kind}-{asked:020d}-{os.getpid()}-{secrets.token_hex(4)}{_TICKET}"
        mine = _Ticket(name, kind, asked)
        # Locked before it is visible, so nobody takes it for a dead waiter's.
        hidden = directory / f".{name}"
        ticket = open_lock(hidden)
        fcntl.flock(ticket, fcntl.LOCK_EX)
        os.rename(hidden, directory / name)
        try:
            while True:
                now = time.monotonic_ns()
                if self._first(directory, mine, now):
                    aged = mine.rank(now, self.aging_ns)[0] == 0
                    held = self._take(directory, background, aged=aged)
                    if held is not None:
                        return held
                await asyncio.sleep(POLL_SECONDS)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(directory / name)
            os.close(ticket)

    def _first(self, directory: Path, mine: _Ticket, now: int) -> bool:
        """Whether no live waiter ranks before ``mine`` (dead ones' tickets removed)."""
        own = mine.rank(now, self.aging_ns)
        for other in _tickets(directory):
            ahead = other.name != mine.name and other.rank(now, self.aging_ns) < own
            if ahead and _alive(directory / other.name):
                return False
        return True


def _tickets(directory: Path) -> list[_Ticket]:
    with os.scandir(directory) as entries:
        return [ticket for entry in entries if (ticket := _Ticket.parse(entry.name)) is not None]


def _alive(path: Path) -> bool:
    """Whether the ticket's waiter still holds it; a dead waiter's ticket is removed."""
    if not lock_free(path):
        return True
    with contextlib.suppress(OSError):
        os.unlink(path)  # its waiter was killed (or was served and is removing it)
    return False
