"""zcoder leaves, cleanly, when its terminal goes away or it is told to stop.

Textual's exit writes to the terminal; with the terminal gone that write can block for
ever, and zcoder used to stay alive (holding its relay registration and session lock) after
its tmux pane was killed, deaf to SIGTERM. tui/state/exit_guard.py ends it after a grace period.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import TMUX, start_in_tmux

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


def test_a_stalled_tmux_on_the_way_out_cannot_keep_zcoder_alive(world: World) -> None:
    """Issue 18 item 22: the terminal is gone and tmux stalls while zcoder restores its
    extended-keys option; a second signal arrives during that restore. zcoder used to wait
    for ever on the restore's lock (taken again by the last resort, in the same thread),
    its relay registration and session lock kept. The last resort takes nothing it may
    already hold, bounds each step, and a watchdog ends the process after a grace period.
    """
    assert TMUX is not None
    fake_bin = world.root / "fake-bin"
    fake_bin.mkdir()
    stall, called = world.root / "tmux-stalls", world.root / "tmux-called"
    fake = fake_bin / "tmux"
    # zcoder's own tmux calls: the real tmux until told to stall, then a tmux that hangs.
    fake.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{stall}" ]; then echo $$ >> "{called}"; exec sleep 600; fi\n'
        f'exec "{TMUX}" "$@"\n'
    )
    fake.chmod(0o755)
    server = world.server()
    zc = start_in_tmux(world, "proj", server, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    pid = zc.pid
    assert zc.relay_files()
    stall.touch()
    try:
        zc.tmux("kill-server")  # the terminal is gone: SIGHUP, then the way out
        wait_until(called.exists, timeout=30, what="zcoder to call tmux on its way out")
        if not _gone(pid):
            os.kill(pid, signal.SIGTERM)  # the second signal, while tmux stalls
        wait_until(lambda: _gone(pid), timeout=20, what="zcoder to end although tmux stalls")
        assert zc.relay_files() == []
    finally:
        for word in called.read_text().split() if called.exists() else []:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(word), signal.SIGKILL)
