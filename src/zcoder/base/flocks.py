"""Kernel locks as proof of life: a flock on an open descriptor lasts exactly as long as
its holder (the kernel drops it however the process ends, ``kill -9`` included), so a
lock that can be taken is one whose holder is gone. For the shared embedded server's
users and slots (zcoder.model.shared_embedded) and the turn queue's places and tickets
(zcoder.model.turn_queue)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Sequence
from pathlib import Path

from zcoder.base.safefile import PRIVATE_FILE_MODE

__all__ = ["lock_free", "open_lock", "take_first_free"]


def open_lock(path: Path) -> int:
    """A descriptor on the lock file ``path`` (made 0600 if missing; never through a link,
    never inherited by a child)."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE_MODE)


def take_first_free(paths: Sequence[Path]) -> tuple[int, int] | None:
    """(index, descriptor holding its exclusive lock) of the first of ``paths`` nobody
    holds, or None when every one is held."""
    for index, path in enumerate(paths):
        fd = open_lock(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return index, fd
    return None


def lock_free(path: Path) -> bool:
    """Whether nobody holds any lock on ``path`` now (a missing file: True). The probe's
    own lock is released before this returns."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True
