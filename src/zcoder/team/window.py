"""tmux's side of a team: a worker's window, started, looked at and closed.

A new window gets the tmux server's environment, not the lead's, so the worker is started
through a launcher (``python -m zcoder.team.launch FILE``) that takes the lead's
environment and the worker's command line from FILE: a private file (0600, in a private
directory) it reads once and removes. So no setting, and no key (``ZCODER_API_KEY``), is
ever on a command line another process could read. The window is named after the worker
(the name is a relay name: letters, digits, ``_ . -``), but tmux is told which window by
its id (``@12``), never its name (``a.b`` would be read as window ``a``, pane ``b``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from zcoder.base.safefile import PRIVATE_FILE_MODE, ensure_private_dir, replace_with
from zcoder.sessions.liveness import is_alive
from zcoder.team.git import TeamError, run_program
from zcoder.team.launch import PANE_OWN

TMUX_TIMEOUT: Final = 10.0
STOP_GRACE_SECONDS: Final = 10.0  # SIGTERM first; the window is killed after this
# What the worker must not take from the lead: its name and workspace are its own.
NOT_INHERITED: Final = (*PANE_OWN, "ZCODER_AGENT_NAME", "ZCODER_WORKSPACE")


def in_tmux(env: Mapping[str, str]) -> bool:
    return bool(env.get("TMUX")) and shutil.which("tmux") is not None


def tmux(*args: str) -> str:
    """``tmux args`` on the server this zcoder runs in (``$TMUX``); its output."""
    done = run_program(["tmux", *args], timeout=TMUX_TIMEOUT)
    if done.returncode != 0:
        raise TeamError(f"tmux {args[0]} failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def launch_file(home: Path, name: str, argv: Sequence[str], cwd: Path) -> Path:
    """The launcher's private file: this process's environment (less what the pane and
    the worker have of their own) and the worker's command line."""
    directory = home / "team" / "launch"
    ensure_private_dir(directory)
    env = {key: value for key, value in os.environ.items() if key not in NOT_INHERITED}
    path = directory / f"{name}-{secrets.token_hex(8)}.json"
    data = json.dumps({"argv": list(argv), "cwd": str(cwd), "env": env}).encode("utf-8")
    replace_with(path.with_suffix(".tmp"), path, data, PRIVATE_FILE_MODE)
    return path


def new_window(name: str, cwd: Path, launch: Path, env: Mapping[str, str]) -> tuple[str, int]:
    """A window named ``name`` beside this pane's (not made current) running the launcher
    on ``launch``; its window id and its process."""
    here: list[str] = []
    # Where the launcher itself is found (a source checkout run with PYTHONPATH): not secret.
    found = ["-e", f"PYTHONPATH={env['PYTHONPATH']}"] if env.get("PYTHONPATH") else []
    pane = env.get("TMUX_PANE", "")
    if pane:
        here = ["-a", "-t", tmux("display-message", "-p", "-t", pane, "#{window_id}").strip()]
    shown = tmux(
        "new-window", "-d", *here, *found, "-P", "-F", "#{window_id} #{pane_pid}", "-n", name,
        "-c", str(cwd), "--", sys.executable, "-m", "zcoder.team.launch", str(launch),
    ).split()  # fmt: skip
    if len(shown) != 2 or not shown[1].isdigit():
        raise TeamError(f"tmux new-window said {' '.join(shown)!r}, not a window and a pid")
    return shown[0], int(shown[1])


def open_windows() -> dict[str, int]:
    """The tmux server's windows (by id) and the process of each one's first pane; empty
    when tmux cannot be asked (not in tmux, the server gone)."""
    try:
        listed = tmux("list-windows", "-a", "-F", "#{window_id} #{pane_pid}")
    except TeamError:
        return {}
    windows: dict[str, int] = {}
    for line in listed.splitlines():
        window_id, _, pid = line.partition(" ")
        if pid.isdigit():
            windows.setdefault(window_id, int(pid))
    return windows


def window_pid(window: str) -> int | None:
    """The process of the window's pane, or None when that window is gone."""
    return open_windows().get(window) if window.startswith("@") else None


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs: a process that has ended but that its parent (tmux) has
    not reaped yet, a zombie, has quit (zcoder.sessions.liveness says so)."""
    return is_alive(pid, "")


def stop_window(window: str, pid: int, *, grace: float = STOP_GRACE_SECONDS) -> str:
    """End a worker: SIGTERM to its process (zcoder quits as on /quit, telling the senders
    of what it had queued), then, after ``grace`` seconds, its window killed. Only the
    process the window still runs is signalled. Returns what happened, in words."""
    running = window_pid(window)
    if running is None:
        return "its window was closed already"
    if running != pid:
        # Window ids are the tmux server's: after a restart of tmux, @3 may be another
        # window of the user's. Only the window still running the worker is touched.
        return f"its window {window} no longer runs it, so it was left alone"
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not alive(pid):
        return "it quit"
    if window_pid(window) == pid:
        tmux("kill-window", "-t", window)
    return f"it did not quit within {grace:g} s; its window was killed"
