"""Whether a process (or a process group) exists: for the relay's listener (a sender
gone), the TUI (a tmux client gone) and run_command (a background group left), which must
not import each other for it."""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["group_signalable", "pid_alive"]


def _answers(probe: Callable[[], object]) -> bool:
    """Whether signal 0 reaches its target: no such process is False, one we may not
    signal (another user's) is True."""
    try:
        probe()
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def pid_alive(pid: int) -> bool:
    """Whether a process exists. Liveness hint only: pids are reused."""
    return _answers(lambda: os.kill(pid, 0))


def group_signalable(pgid: int) -> bool:
    """Whether the kernel still has a process group ``pgid`` (its zombies count)."""
    return _answers(lambda: os.killpg(pgid, 0))
