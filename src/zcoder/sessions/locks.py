"""Which sessions are open in a live zcoder: one ``flock`` per session, that a crash cannot
leave stuck.

A process that opens a session holds an exclusive ``flock`` on
``<home>/locks/<session id>.lock`` (0600, in a 0700 directory) for as long as the session
is open; it writes its pid into the file so that another zcoder can say who has it. The
kernel drops the lock when the holding process ends, however it ends (a crash, SIGKILL,
a power cut), so there is nothing to clean up and no stale lock to break. The descriptor
is close-on-exec, so commands the agent runs do not inherit the lock.

flock locks belong to an open file description: two opens in one process exclude each
other like two processes do, so two apps under test in one process behave like two
zcoders. Lock files are never removed: removing one while another process waits on it
would let two processes hold "the" lock at once. They are a few bytes each.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
from pathlib import Path

from zcoder.base.errors import ZcoderError
from zcoder.base.flock import HeldFlock
from zcoder.base.safefile import PRIVATE_FILE_MODE, ensure_private_dir

log = logging.getLogger(__name__)

LOCKS_DIR_NAME = "locks"
_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class SessionInUseError(ZcoderError):
    """The session is open in another live zcoder (``pid`` is None when it is not known)."""

    def __init__(self, session_id: str, pid: int | None) -> None:
        who = f"another zcoder (pid {pid})" if pid else "another zcoder"
        super().__init__(f"session {session_id} is open in {who}")
        self.session_id = session_id
        self.pid = pid


class SessionLock(HeldFlock):
    """A held lock on one session; :meth:`release` (or ``with``) lets it go."""

    def __init__(self, session_id: str, path: Path, fd: int) -> None:
        super().__init__(fd)
        self.session_id = session_id
        self.path = path

    def __enter__(self) -> SessionLock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


def lock_path(home: str | os.PathLike[str], session_id: str) -> Path:
    if not _SAFE_ID.fullmatch(session_id) or session_id.startswith("."):
        raise ValueError(f"not a session id: {session_id!r}")
    return Path(home) / LOCKS_DIR_NAME / f"{session_id}.lock"


def acquire(home: str | os.PathLike[str], session_id: str) -> SessionLock:
    """Lock ``session_id`` for this process, or raise :class:`SessionInUseError` at once.

    OSError (a home that cannot be written) is left to the caller.
    """
    path = lock_path(home, session_id)
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionInUseError(session_id, holder_pid(home, session_id)) from None
    except BaseException:
        os.close(fd)
        raise
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except BaseException:
        os.close(fd)
        raise
    return SessionLock(session_id, path, fd)


def holder_pid(home: str | os.PathLike[str], session_id: str) -> int | None:
    """The pid written by the process holding the lock (None if unknown or being written)."""
    try:
        text = lock_path(home, session_id).read_text(encoding="ascii", errors="replace")
    except (OSError, ValueError):
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


class LockTaker:
    """``take`` for :meth:`SessionStore.reuse_or_create`: takes the flock of the first free
    candidate (kept in ``lock``; None for ``mine``) and remembers the candidates open in
    another zcoder (``in_use``)."""

    def __init__(self, home: str | os.PathLike[str], *, mine: str | None = None) -> None:
        self.home = home
        self.mine = mine  # the session this process has open already: it may be handed back
        self.lock: SessionLock | None = None
        self.in_use: list[SessionInUseError] = []

    def __call__(self, session_id: str) -> bool:
        if session_id == self.mine:
            return True
        try:
            self.lock = acquire(self.home, session_id)
        except SessionInUseError as exc:
            self.in_use.append(exc)
            return False
        except OSError:
            # No lock can be made (a read-only home): sessions still work, unguarded.
            log.warning("cannot lock session %s", session_id, exc_info=True)
            self.lock = None
        return True
