"""The worker's launcher: the lead's environment reaches the worker through a private file
read once and removed, never through a command line; a file anyone else could have
written is refused and nothing runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from zcoder.team.window import launch_file

SRC = Path(__file__).resolve().parents[2] / "src"


def run_launcher(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zcoder.team.launch", str(path)],
        env={"PYTHONPATH": str(SRC), "PATH": os.environ["PATH"], "TERM": "tmux", **env},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_the_worker_gets_the_leads_environment_but_no_secret_is_on_a_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZCODER_API_KEY", "sk-secret-123")
    monkeypatch.setenv("ZCODER_AGENT_NAME", "lead")  # the worker's name is its own
    show = "import os, sys; print(os.environ.get('ZCODER_API_KEY'), os.environ.get("
    show += "'ZCODER_AGENT_NAME'), os.environ.get('TMUX_PANE'), os.getcwd(), sys.argv[1:])"
    argv = [sys.executable, "-c", show, "--name", "w1"]
    path = launch_file(tmp_path / "home", "w1", argv, tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert "sk-secret-123" not in " ".join(argv)
    done = run_launcher(path, TMUX_PANE="%7")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "sk-secret-123",
        "None",
        "%7",
        str(tmp_path),
        "['--name',",
        "'w1']",
    ]
    assert not path.exists()  # read once, then gone


def test_a_launch_file_others_could_write_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    path = launch_file(tmp_path / "home", "w1", argv, tmp_path)
    path.chmod(0o666)
    done = run_launcher(path)
    assert done.returncode == 1 and "others may read or write it" in done.stderr
    assert not marker.exists()
    link = tmp_path / "home" / "team" / "launch" / "link.json"
    target = tmp_path / "evil.json"
    target.write_text(json.dumps({"argv": argv, "cwd": str(tmp_path), "env": {}}))
    target.chmod(0o600)
    link.symlink_to(target)
    done = run_launcher(link)
    assert done.returncode == 1 and not marker.exists()
