"""What the board hands back: plain frozen records and the bounds on what goes in."""

from __future__ import annotations

import enum
import os
import socket
from dataclasses import dataclass, field
from typing import Final

from zcoder.base.errors import UsageError, ZcoderError


@dataclass(frozen=True)
class Bounds:
    """What one board and one task may hold; past a bound, nothing is changed and the
    error says which bound it was."""

    title: int = 200  # a listing shows it on one line
    description: int = 8000  # what to do, in full: a page of text
    note: int = 2000  # what was done or found
    dependencies: int = 50  # tasks one task waits on
    name: int = 100  # a claimant's or an author's name, and an instance
    tasks: int = 10_000  # on one board, done ones included


BOUNDS: Final = Bounds()


class BoardError(ZcoderError):
    """The board cannot be used (its file, its directory); the message says what to do."""


class TaskRefused(UsageError):
    """What was asked of a task cannot be done (unknown id, not claimable, bad input);
    the message says why and nothing was changed."""


class State(enum.Enum):
    OPEN = "open"
    CLAIMED = "claimed"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class Claimant:
    """Who holds a claim: a name people know it by and the exact instance."""

    name: str
    instance: str

    @classmethod
    def this_process(cls, name: str, instance: str | None = None) -> Claimant:
        """``name`` in this process (its instance: host and pid, unless given)."""
        return cls(name, instance or f"{socket.gethostname()}:{os.getpid()}")


@dataclass(frozen=True)
class Note:
    """A line an agent, a script or the board itself added to a task (oldest first)."""

    at: float  # seconds since the epoch
    author: str
    text: str


@dataclass(frozen=True)
class Task:
    id: int
    title: str
    description: str
    state: State
    """As readers must take it: a claim whose holder is gone reads as open."""
    claimant: str | None
    instance: str | None
    pid: int | None
    created_by: str
    created_at: float
    updated_at: float
    dependencies: tuple[int, ...] = ()
    waiting_on: tuple[int, ...] = ()
    """The dependencies not done yet: the task cannot be claimed while any is left."""
    notes: tuple[Note, ...] = field(default=())

    @property
    def claimable(self) -> bool:
        return self.state is State.OPEN and not self.waiting_on


def checked_text(what: str, text: str, limit: int, *, empty: bool = False) -> str:
    """``text`` when it is within ``limit`` characters (and not blank unless ``empty``)."""
    if not isinstance(text, str):
        raise TaskRefused(f"the {what} must be text")
    if not empty and not text.strip():
        raise TaskRefused(f"the {what} is empty; nothing was changed")
    if len(text) > limit:
        raise TaskRefused(
            f"the {what} has {len(text):,} characters; at most {limit:,}; nothing was changed"
        )
    return text
