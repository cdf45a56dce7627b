"""What the board's tests share: a repository, a claimant process, waiting on a condition."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60.0
"""The longest any condition is waited for: a deadline that fails the test, never a pace."""


def child_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["ZCODER_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return env


def python(home: Path, cwd: Path, *args: str) -> subprocess.Popen[str]:
    """``python ARGS`` in ``cwd`` with ``home`` as $ZCODER_HOME, its output piped."""
    return subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=cwd, env=child_env(home),
    )  # fmt: skip


def claimer(home: Path, *args: str) -> subprocess.Popen[str]:
    """A claimant process (tests/fixtures/board_claimer.py)."""
    return python(home, ROOT, "-m", "tests.fixtures.board_claimer", *args)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> float:
    """Seconds until ``condition`` held (polled every millisecond); fails after ``timeout``."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what}")
        time.sleep(0.001)
    return time.monotonic() - start


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(path),
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "start",
        ],
        check=True,
    )
    return path.resolve()
