"""zcoder leaves, cleanly, when its terminal goes away or it is told to stop.

Textual's exit writes to the terminal; with the terminal gone that write can block for
ever, and zcoder used to stay alive (holding its relay registration and session lock) after
its tmux pane was killed, deaf to SIGTERM. tui/exit_guard.py ends it after a grace period.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import start_in_tmux

pytestmark = pytest.mark.slow


def _gone(pid: int) -> bool:
    """Ended: no such process, or a zombie waiting to be collected (when this test process
    is a child subreaper, as run_command makes it, the orphaned zcoder is its zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X")


def test_killing_the_terminal_ends_zcoder_and_removes_its_relay_files(world: World) -> None:
    server = world.server()
    zc = start_in_tmux(world, "proj", server)
    pid = zc.pid
    assert zc.relay_files()  # registered: manifest, socket, lock
    zc.tmux("kill-server")  # the terminal is gone: SIGHUP, then a dead tty
    wait_until(lambda: _gone(pid), timeout=20, what="zcoder to end after its terminal went")
    assert zc.relay_files() == []


def test_sigterm_ends_zcoder_whose_terminal_is_gone(world: World) -> None:
    """The worst case: the terminal vanished while SIGHUP was ignored (as nohup does)."""
    server = world.server()
    zc = start_in_tmux(world, "proj", server)
    pid = zc.pid
    zc.tmux("kill-server")
    # Whether or not the hang-up already ended it, a SIGTERM now must not be ignored.
    if not _gone(pid):
        os.kill(pid, signal.SIGTERM)
    wait_until(lambda: _gone(pid), timeout=20, what="zcoder to end on SIGTERM")
    assert zc.relay_files() == []
