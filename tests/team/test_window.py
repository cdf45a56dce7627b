"""A worker's window in a real (private) tmux server: stopped by SIGTERM to its process,
and a window id that now runs something else is never touched."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from zcoder.team.window import open_windows, stop_window

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
