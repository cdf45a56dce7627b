"""The kernel's proof that a claimant lives: one ``flock`` per task, on a file of its own.

A claim is held through an open descriptor of ``locks/<id>.lock`` locked exclusively.
The kernel drops the lock when the last descriptor of that open file goes, so when the
claiming process dies, however it dies (SIGKILL included), the task is free again at
once: no heartbeat, no timeout. Why ``flock`` and not ``fcntl``'s POSIX locks: a POSIX
lock belongs to the process and is dropped when it closes *any* descriptor of the file
(a probe of its own claim would release it), and locks of one process never conflict
with each other; ``flock`` belongs to the open file, so two claims in one process
exclude each other and a probe is harmless. The descriptor is close-on-exec, so a
command the claimant starts (``zcoder tasks claim -- COMMAND``) does not inherit the
claim: it dies with the claimant, not with whatever the claimant started.

Lock files are never removed: removing one while another process opens it would let two
processes lock two different files for one task.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path
from typing import Final

from zcoder.base.flock import HeldFlock
from zcoder.base.safefile import PRIVATE_FILE_MODE
from zcoder.board.records import BoardError

_OPEN_FLAGS: Final = os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NOCTTY


def lock_path(locks: Path, task_id: int) -> Path:
    return locks / f"{task_id:d}.lock"


class TaskLock(HeldFlock):
    """One task's claim lock, held by this process until ``release`` (or its death)."""

    def __init__(self, fd: int, task_id: int) -> None:
        super().__init__(fd)
        self.task_id = task_id


def _open(path: Path, flags: int) -> int:
    try:
        return os.open(path, flags | _OPEN_FLAGS, PRIVATE_FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BoardError(f"{path} is a symbolic link; a lock file must not be") from None
        raise


def take(locks: Path, task_id: int) -> TaskLock | None:
    """The task's lock, taken without waiting; None while another open file holds it."""
    path = lock_path(locks, task_id)
    try:
        fd = _open(path, os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        raise BoardError(f"cannot open the task's lock file {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError as exc:
        os.close(fd)
        raise BoardError(f"cannot lock {path}: {exc.strerror}") from None
    return TaskLock(fd, task_id)


def is_held(locks: Path, task_id: int) -> bool:
    """Whether a live process holds the task's lock. The probe takes a shared lock and
    lets it go at once: it never keeps a claimant out for longer than that."""
    try:
        fd = _open(lock_path(locks, task_id), os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: never call a live claim dead
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return True
    finally:
        os.close(fd)  # the shared lock goes with it
    return False
