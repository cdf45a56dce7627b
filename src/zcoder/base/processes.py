"""Whether a process exists: for the relay's listener (a sender gone) and the TUI (a
tmux client gone), which must not import each other for it."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """Whether a process exists. Liveness hint only: pids are reused."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True
