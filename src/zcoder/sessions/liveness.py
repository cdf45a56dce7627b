"""Whether the process that wrote a row is still running, robust to pid reuse and reboots.

A running tool event whose writer is gone is shown as interrupted; an empty session held by a
live process is not handed to another one. Linux /proc gives the process start time and the
boot id; where it is missing, only the pid is checked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_BOOT_ID_FILE = Path("/proc/sys/kernel/random/boot_id")
# Field 22 of /proc/PID/stat is the start time; fields are counted after the ")" ending
# the command name (field 2), whose text may itself hold spaces and parentheses.
_STATE_INDEX = 0  # field 3
_START_TIME_INDEX = 19  # field 22


@dataclass(frozen=True, slots=True)
class ProcessStamp:
    pid: int
    token: str  # "<boot id>:<start time>", or "" where /proc is unavailable


def _read_boot_id() -> str:
    try:
        return _BOOT_ID_FILE.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of ``pid`` from /proc, or None if it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) <= _START_TIME_INDEX:
        return None
    return fields[_STATE_INDEX].decode("ascii", "replace"), fields[_START_TIME_INDEX].decode(
        "ascii", "replace"
    )


def _token_for(pid: int) -> str:
    boot_id = _read_boot_id()
    stat = _proc_stat(pid)
    if not boot_id or stat is None:
        return ""
    return f"{boot_id}:{stat[1]}"


_cached: ProcessStamp | None = None


def current_stamp() -> ProcessStamp:
    """The stamp of this process (recomputed after a fork)."""
    global _cached
    pid = os.getpid()
    if _cached is None or _cached.pid != pid:
        _cached = ProcessStamp(pid, _token_for(pid))
    return _cached


def is_alive(pid: int, token: str) -> bool:
    """True when the process stamped (pid, token) is still running."""
    if pid <= 0:
        return False
    me = current_stamp()
    if pid == me.pid:
        return not token or not me.token or token == me.token
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    except OSError:
        return False
    stat = _proc_stat(pid)
    if stat is None:
        return True  # no /proc: the pid exists, which is all we can know
    if stat[0] in ("Z", "X"):
        return False  # exited, not yet reaped
    if not token:
        return True
    return _token_for(pid) in ("", token)
