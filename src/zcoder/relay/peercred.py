"""Who is on the other end of a Unix socket (SO_PEERCRED on Linux)."""

from __future__ import annotations

import functools
import os
import socket
import struct
import sys
from collections.abc import Callable
from typing import Final, NamedTuple

_UCRED: Final = struct.Struct("3i")
# Bounds the walk up the process tree; real trees are far shallower.
MAX_ANCESTRY_DEPTH: Final = 256


class PeerCredentials(NamedTuple):
    # A named tuple, not a frozen dataclass: built for every connection, in a third of
    # the time, and as immutable.
    pid: int
    uid: int
    gid: int


# SO_PEERCRED where the kernel answers it as Linux does (None elsewhere).
_SO_PEERCRED: Final = (
    getattr(socket, "SO_PEERCRED", None) if sys.platform.startswith("linux") else None
)


def peer_credentials(sock: socket.socket) -> PeerCredentials | None:
    """The connecting process's credentials, or None where the kernel does not say."""
    if _SO_PEERCRED is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, _SO_PEERCRED, _UCRED.size)
    except OSError:
        return None
    return PeerCredentials._make(_UCRED.unpack(raw))


def _open_stat(pid: int) -> tuple[int, bytes] | None:
    """/proc/<pid>/stat opened and read: its descriptor (the caller closes it) and bytes."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return fd, os.read(fd, 4096)  # a third cheaper than open(): once per enqueue, or more
    except OSError:
        os.close(fd)
        return None


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, session, ..."""
    opened = _open_stat(pid)
    if opened is None:
        return None
    os.close(opened[0])
    return _fields_of(opened[1])


# Index of stat's field 22 (starttime) in ``_fields_of``, which starts at field 3 (state).
_STARTTIME: Final = 22 - 3


def _fields_of(data: bytes) -> list[bytes] | None:
    """Stat's fields from 3 (state) to 22 (starttime), and the rest unsplit as the last:
    nothing here reads past the start time, and splitting all fifty costs a read's time."""
    # The command name is in parentheses and may itself contain ") ", so split at the last.
    close = data.rfind(b")")
    if close < 0:
        return None
    return data[close + 2 :].split(maxsplit=_STARTTIME + 1)


def start_time_of(fields: list[bytes] | None) -> bytes | None:
    """When a process started (field 22 of its stat, in clock ticks since boot), from its
    stat's fields: with the pid, it names one process for as long as the machine runs."""
    if fields is None or len(fields) <= _STARTTIME:
        return None
    return fields[_STARTTIME]


class ProcessStats:
    """/proc/<pid>/stat of the few processes that keep connecting (the listener's senders),
    each read through a descriptor kept open for its pid: a read costs half an open, read
    and close. A descriptor stays bound to the process it was opened for; once that process
    is reaped its reads fail (ESRCH) and the pid is looked up afresh, so a reused pid is
    never taken for the process that had it. At most ``limit`` descriptors are kept."""

    def __init__(self, limit: int = 16) -> None:
        self.limit = limit
        self._fds: dict[int, int] = {}

    def fields(self, pid: int) -> list[bytes] | None:
        fd = self._fds.get(pid)
        if fd is not None:
            try:
                data = os.pread(fd, 4096, 0)
            except OSError:
                data = b""
            if data:
                return _fields_of(data)
            self._forget(pid)
        opened = _open_stat(pid)
        if opened is None:
            return None
        fd, data = opened
        if len(self._fds) >= self.limit:
            self.close()
        self._fds[pid] = fd
        return _fields_of(data)

    def start_time(self, pid: int) -> bytes | None:
        """When ``pid`` started, read now (``start_time_of``)."""
        return start_time_of(self.fields(pid))

    def _forget(self, pid: int) -> None:
        fd = self._fds.pop(pid, None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        for pid in list(self._fds):
            self._forget(pid)


def parent_pid(pid: int) -> int | None:
    """The parent of ``pid`` from /proc, or None when it cannot be read."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 2:
        return None
    try:
        return int(fields[1])
    except ValueError:
        return None


def is_same_or_descendant(pid: int, ancestor: int) -> bool:
    """Whether ``pid`` is ``ancestor`` or one of its descendants."""
    current: int | None = pid
    for _ in range(MAX_ANCESTRY_DEPTH):
        if current is None or current <= 0:
            return False
        if current == ancestor:
            return True
        if current == 1:
            return False
        current = parent_pid(current)
    return False


# Process states of a task that has exited: zombie, and dead ("x" on some older kernels).
_EXITED_STATES: Final = (b"Z", b"X", b"x")


def is_sender_in_its_session(
    pid: int,
    sender_pid: int,
    stat_fields: Callable[[int], list[bytes] | None] = _stat_fields,
) -> bool:
    """Whether the live process ``pid`` is ``sender_pid``, or a descendant of it that is
    still in ``sender_pid``'s own session (a subshell is; a command started with setsid,
    as run_command starts every command, is not). A process that is gone, or has exited
    and not yet been reaped, is refused: nothing about it can be trusted any more.
    ``stat_fields`` reads ``pid``'s stat (a ProcessStats' ``fields``, in the listener)."""
    if pid <= 0 or sender_pid <= 0:  # getsid(0) would be this process's own session
        return False
    fields = stat_fields(pid)
    if fields is None or len(fields) < 4 or fields[0] in _EXITED_STATES:
        return False
    if pid == sender_pid:
        return True  # the sender itself, alive: its session is its own
    try:
        parent, session = int(fields[1]), int(fields[3])
        if session != os.getsid(sender_pid):
            return False
    except (ValueError, OverflowError, OSError):  # the sender's pid is what a peer wrote
        return False
    return is_same_or_descendant(parent, sender_pid)


@functools.cache
def can_check_ancestry() -> bool:
    return os.path.isdir("/proc/self")


# -- facts the kernel keeps about a live process (for the sender's standing) -------------

PROC_LOCKS: Final = "/proc/locks"
# /proc/locks of a machine with many locks is read in a bounded amount: far more than a
# desktop or a build server holds, and a sender whose lock is past it is not verified.
MAX_PROC_LOCKS_BYTES: Final = 4 * 1024 * 1024


def flock_holders(path: str, proc_locks: str = PROC_LOCKS) -> frozenset[int]:
    """The pids that hold a granted flock(2) on the file or directory ``path`` (not
    followed if it is a symlink), as the kernel lists them in /proc/locks. Empty when the
    file or /proc/locks cannot be read. A waiter (``->``) holds nothing and is not listed."""
    return flock_holders_of((path,), proc_locks)[0]


def flock_holders_of(
    paths: tuple[str, ...], proc_locks: str = PROC_LOCKS
) -> tuple[frozenset[int], ...]:
    """``flock_holders`` of each path, from one read of /proc/locks."""
    inodes: list[int | None] = []
    for path in paths:
        try:
            inodes.append(os.stat(path, follow_symlinks=False).st_ino)
        except OSError:
            inodes.append(None)
    found: dict[int, set[int]] = {ino: set() for ino in inodes if ino is not None}
    if found:
        try:
            with open(proc_locks, "rb") as handle:
                data = handle.read(MAX_PROC_LOCKS_BYTES)
        except OSError:
            data = b""
        for line in data.splitlines():
            # "12: FLOCK  ADVISORY  WRITE 4242 fe:00:2180079 0 EOF"; a waiter has "->"
            # second, and so never matches.
            fields = line.split()
            if len(fields) < 6 or fields[1] != b"FLOCK":
                continue
            # The inode number only: the device the kernel prints is the file system's
            # own, which differs from stat's st_dev on btrfs subvolumes and overlays. A
            # match still needs the pid too: only a process holding a lock on an inode
            # of that number passes.
            where = fields[5].split(b":")
            if len(where) != 3 or not where[2].isdigit() or not fields[4].isdigit():
                continue
            holders = found.get(int(where[2]))
            if holders is not None:
                holders.add(int(fields[4]))
    return tuple(frozenset(found[ino]) if ino is not None else frozenset() for ino in inodes)


def process_cwd(pid: int) -> str | None:
    """The working directory of the live process ``pid`` (/proc/<pid>/cwd), or None."""
    if pid <= 0:
        return None
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
