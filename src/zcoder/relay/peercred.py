"""Who is on the other end of a Unix socket (SO_PEERCRED on Linux)."""

from __future__ import annotations

import functools
import os
import socket
import struct
import sys
from dataclasses import dataclass
from typing import Final

_UCRED: Final = struct.Struct("3i")
# Bounds the walk up the process tree; real trees are far shallower.
MAX_ANCESTRY_DEPTH: Final = 256


@dataclass(frozen=True)
class PeerCredentials:
    pid: int
    uid: int
    gid: int


def peer_credentials(sock: socket.socket) -> PeerCredentials | None:
    """The connecting process's credentials, or None where the kernel does not say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or not sys.platform.startswith("linux"):
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, _UCRED.size)
    except OSError:
        return None
    pid, uid, gid = _UCRED.unpack(raw)
    return PeerCredentials(pid=pid, uid=uid, gid=gid)


def parent_pid(pid: int) -> int | None:
    """The parent of ``pid`` from /proc, or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read(4096)
    except OSError:
        return None
    # The command name is in parentheses and may itself contain ") ", so split at the last.
    close = data.rfind(b")")
    if close < 0:
        return None
    fields = data[close + 2 :].split()
    if len(fields) < 2:
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


@functools.cache
def can_check_ancestry() -> bool:
    return os.path.isdir("/proc/self")
