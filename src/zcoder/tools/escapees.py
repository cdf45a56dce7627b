"""Processes a command started that left its process group: found and ended.

run_command kills the command's process group; ``setsid``, a double fork or ``nohup ... &``
with its own session leave that group and used to outlive the command, its timeout and
Escape. Each command's processes carry a tag in their environment
(``ZCODER_COMMAND_TAG``, inherited by everything they start); when the command ends, times
out or is cancelled, every process of this user still carrying the tag is ended, group and
all, and the result says which. zcoder is also made a child subreaper
(``PR_SET_CHILD_SUBREAPER``): a double-forked orphan is reparented to zcoder, not to init,
and its exit is reaped here rather than left as a zombie.

What this cannot see: a process that leaves the group *and* execs with a cleared
environment (``env -i``). A cgroup would; this works without privileges on any Linux.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from zcoder.base.processes import group_signalable

TAG_VARIABLE: Final = "ZCODER_COMMAND_TAG"
PR_SET_CHILD_SUBREAPER: Final = 36
_PROC: Final = Path("/proc")
_subreaper_done = False


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is still in the group."""
    if not group_signalable(pgid):
        return False
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_text = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the command name (which may contain spaces and parentheses).
        fields = stat_text.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def new_tag() -> str:
    return f"{os.getpid()}-{secrets.token_hex(8)}"


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); True if it is."""
    global _subreaper_done
    if _subreaper_done:
        return True
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    _subreaper_done = True
    return True


@dataclass(frozen=True)
class Ended:
    pid: int
    name: str


def _tagged(pid_dir: Path, marker: bytes) -> bool:
    try:
        return marker in (pid_dir / "environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _name(pid_dir: Path) -> str:
    try:
        return (pid_dir / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "?"


def end_tagged(tag: str) -> list[Ended]:
    """SIGKILL every process of this user whose environment carries ``tag`` (and its
    group); the ones ended. Zombies reparented to this process are reaped."""
    if not _PROC.is_dir():
        return []
    marker = f"{TAG_VARIABLE}={tag}".encode()
    me, uid = os.getpid(), os.geteuid()
    ended: list[Ended] = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
        except OSError:
            continue
        if not _tagged(entry, marker):
            continue
        pid = int(entry.name)
        name = _name(entry)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            pgid = os.getpgid(pid)
            if pgid not in (me, os.getpgid(me)):
                os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        ended.append(Ended(pid, name))
    reap_orphans(ended)
    return ended


REAP_SECONDS: Final = 1.0


def reap_orphans(ended: list[Ended]) -> None:
    """Collect the exit of ended processes that were reparented to us (subreaper), so none
    is left a zombie; a process that is not our child is its parent's to collect."""
    deadline = time.monotonic() + REAP_SECONDS
    for process in ended:
        while True:
            try:
                pid, _ = os.waitpid(process.pid, os.WNOHANG)
            except ChildProcessError:
                break  # not ours, or collected already
            if pid or time.monotonic() > deadline:
                break
            time.sleep(0.01)


def describe(ended: list[Ended]) -> str:
    """The line a command's result gets when escaped processes were ended."""
    if not ended:
        return ""
    shown = ", ".join(f"{p.name} (pid {p.pid})" for p in ended[:8])
    more = f" and {len(ended) - 8} more" if len(ended) > 8 else ""
    return (
        f"[ended {len(ended)} process{'es' if len(ended) != 1 else ''} that had left the"
        f" command's process group: {shown}{more}]"
    )
