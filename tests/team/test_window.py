"""A worker's window in a real (private) tmux server: stopped by SIGTERM to its process,
and a window id that now runs something else is never touched."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from zcoder.team.window import alive, open_windows, stop_window

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    socket = tmp_path / "tmux.sock"
    subprocess.run(
        ["tmux", "-S", str(socket), "-f", "/dev/null", "new-session", "-d", "-s", "t",
         "sleep 600"],
        check=True, timeout=10,
    )  # fmt: skip
    monkeypatch.setenv("TMUX", f"{socket},0,0")  # as inside that server: tmux finds it
    try:
        yield socket
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], check=False, timeout=10)


def new_window(socket: Path) -> tuple[str, int]:
    shown = subprocess.run(
        ["tmux", "-S", str(socket), "new-window", "-d", "-P", "-F", "#{window_id} #{pane_pid}",
         "--", "sleep", "600"],
        check=True, capture_output=True, text=True, timeout=10,
    ).stdout.split()  # fmt: skip
    return shown[0], int(shown[1])


def test_a_window_whose_process_is_not_the_workers_is_left_alone(server: Path) -> None:
    window, pid = new_window(server)
    said = stop_window(window, pid + 1)
    assert "left alone" in said
    assert open_windows().get(window) == pid


def test_the_worker_is_sent_sigterm_and_its_window_closes(server: Path) -> None:
    window, pid = new_window(server)
    assert stop_window(window, pid) == "it quit"
    assert window not in open_windows()
    assert "closed already" in stop_window(window, pid)


def test_a_worker_that_quit_but_is_not_reaped_yet_has_quit() -> None:
    """tmux reaps its pane's process when it gets to it: until then the process is a
    zombie, which kill(pid, 0) still finds. A loaded machine showed it: "did not quit"."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        stat = Path(f"/proc/{child.pid}/stat")
        deadline = time.monotonic() + 60
        while " Z " not in stat.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)  # a deadline, never a pace: until it has ended
        assert not alive(child.pid)
    finally:
        child.wait(timeout=60)
    assert not alive(child.pid)
