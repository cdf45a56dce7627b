"""tmux's ``extended-keys`` server option, on while zcoder runs and restored after.

Inside tmux, Shift+Enter reaches a program as something other than Enter only with the
``extended-keys`` server option on. That option is the whole tmux server's, so the
zcoders of one server share it: the first saves the value it found (in a tmux user
option), each adds its pid to a list (another user option), and the last one to leave
restores the saved value. Both changes are read-modify-writes of that shared state over
several tmux calls; two zcoders doing them at once lost a pid, and the option stayed on
(3 of 4 tries when two quit together). So every change holds an exclusive ``flock`` on a
lock file beside the tmux server's socket (``SOCKET.zcoder-keys.lock``, the one place
every client of that server shares, kept after use: removing a lock file is itself a
race). The kernel drops the lock when its holder dies, so a killed zcoder never holds
it; the pids in the list are checked for life, so a killed zcoder's pid does not keep
the option on either.

Every step is bounded (TMUX_CHANGE_SECONDS in all, TMUX_CALL_SECONDS a tmux call, the
wait for the lock too): a tmux that stalls, as one whose server is going away can, never
holds zcoder. A lock file that is not this user's own regular file is not used.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Final

from zcoder.base.processes import pid_alive

__all__ = ["TMUX_CALL_SECONDS", "TMUX_CHANGE_SECONDS", "TmuxExtendedKeys", "lock_path"]

_USERS_OPTION: Final = "@zcoder-extended-keys-users"  # pids of the zcoders that rely on it
_SAVED_OPTION: Final = "@zcoder-extended-keys-before"  # the value to restore after the last
_LOCK_SUFFIX: Final = ".zcoder-keys.lock"
_LOCK_POLL_SECONDS: Final = 0.01

TMUX_CALL_SECONDS: Final = 2.0
"""The longest one tmux call may take; a tmux that has not answered by then is left."""
TMUX_CHANGE_SECONDS: Final = 5.0
"""The longest ``enable`` or ``restore`` may take in all (a handful of tmux calls)."""


class _Deadline:
    """What is left of a bounded piece of work; every tmux call gets no more than that."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def call_timeout(self) -> float:
        return min(TMUX_CALL_SECONDS, self.left())


def _tmux(deadline: _Deadline, *args: str) -> subprocess.CompletedProcess[str] | None:
    """``tmux ARGS``, or None when tmux is missing, failed to run or did not answer in
    time (it is killed then), or the deadline has passed."""
    tmux = shutil.which("tmux")
    timeout = deadline.call_timeout()
    if tmux is None or timeout <= 0:
        return None
    try:
        return subprocess.run(
            [tmux, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _server_option(deadline: _Deadline, name: str) -> str | None:
    done = _tmux(deadline, "show-options", "-sv", name)
    if done is None or done.returncode != 0:
        return None
    return done.stdout.strip()


def _users(deadline: _Deadline) -> list[int]:
    value = _server_option(deadline, _USERS_OPTION) or ""
    return [int(word) for word in value.split() if word.isdigit() and pid_alive(int(word))]


def lock_path(environ: Mapping[str, str]) -> str | None:
    """The lock file of the tmux server whose ``TMUX`` variable is in ``environ``
    (``SOCKET,PID,SESSION``): beside its socket. None outside tmux."""
    socket = environ.get("TMUX", "").rsplit(",", 2)[0]
    return socket + _LOCK_SUFFIX if socket else None


@contextlib.contextmanager
def _server_lock(path: str | None, deadline: _Deadline) -> Iterator[None]:
    """Hold the tmux server's lock for the body, if it can be had before the deadline.

    A lock that cannot be had (no such directory, a file that is not this user's, a
    holder that outlasts the deadline) is done without: the change is made as it was
    before there was a lock, rather than not at all."""
    fd = _open_lock(path) if path is not None else None
    try:
        if fd is not None:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES, errno.EINTR):
                        break
                if deadline.left() <= 0:
                    break
                time.sleep(_LOCK_POLL_SECONDS)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


def _open_lock(path: str) -> int | None:
    """The lock file, opened (made 0600 if new); None unless it is this user's regular
    file, so another user cannot plant one to hold zcoder up."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        os.close(fd)
        return None
    return fd


class TmuxExtendedKeys:
    """tmux's ``extended-keys`` server option turned on while zcoder runs, then restored
    by the last zcoder of the server to leave (see the module docstring). ``enable`` and
    ``restore`` are idempotent and bounded.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        environ = environ if environ is not None else os.environ
        self.inside = bool(environ.get("TMUX"))
        self._lock_path = lock_path(environ)
        self._enabled = False
        self._registered = False
        self._lock = threading.Lock()

    def enable(self) -> None:
        with self._lock:
            if not self.inside or self._enabled:
                return
            deadline = _Deadline(TMUX_CHANGE_SECONDS)
            with _server_lock(self._lock_path, deadline):
                current = _server_option(deadline, "extended-keys")
                if current is None:
                    return  # tmux missing or too old: nothing to change, nothing to restore
                users = _users(deadline)
                # A value saved by a zcoder that was killed before it could restore it is
                # the one to keep: the option now holds what that zcoder set.
                if not users and _server_option(deadline, _SAVED_OPTION) is None:
                    _tmux(deadline, "set-option", "-s", _SAVED_OPTION, current)
                pids = " ".join(map(str, [*users, os.getpid()]))
                _tmux(deadline, "set-option", "-s", _USERS_OPTION, pids)
                if current == "off":
                    _tmux(deadline, "set-option", "-s", "extended-keys", "on")
            self._enabled = True
            if not self._registered:
                atexit.register(self.restore)  # an exit that skips the driver's stop
                self._registered = True

    def restore(self, *, wait: float | None = None) -> bool:
        """Put the option back (or leave it to the zcoders still using it).

        ``wait``: how long to wait for an ``enable`` or ``restore`` already under way;
        None waits for it (it is bounded too). The last resort of an exit passes 0: the
        restore under way may be its own thread's, interrupted by the signal, and a lock
        this thread holds must never be waited for. Returns False when it did not run.
        """
        if not self._lock.acquire(timeout=-1 if wait is None else max(0.0, wait)):
            return False
        try:
            if not self._enabled:
                return True
            self._enabled = False
            deadline = _Deadline(TMUX_CHANGE_SECONDS)
            with _server_lock(self._lock_path, deadline):
                others = [pid for pid in _users(deadline) if pid != os.getpid()]
                if others:
                    pids = " ".join(map(str, others))
                    _tmux(deadline, "set-option", "-s", _USERS_OPTION, pids)
                    return True
                saved = _server_option(deadline, _SAVED_OPTION)
                if saved:
                    _tmux(deadline, "set-option", "-s", "extended-keys", saved)
                _tmux(deadline, "set-option", "-su", _SAVED_OPTION)
                _tmux(deadline, "set-option", "-su", _USERS_OPTION)
            return True
        finally:
            self._lock.release()
