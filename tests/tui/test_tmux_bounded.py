"""tmux's option is changed with bounded calls, and a restore never waits on one under way
when told not to (the exit's last resort: issue 18 item 22).

A fake ``tmux`` first on PATH: it records each call and then either waits until the test
releases it, or never answers. The real tmux is not needed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zcoder.tui.state import tmux_keys
from zcoder.tui.state.tmux_keys import TmuxExtendedKeys

JOIN_DEADLINE = 60.0  # generous: only a call that is not bounded fails it


class FakeTmux:
    def __init__(self, root: Path) -> None:
        self.bin = root / "bin"
        self.bin.mkdir()
        self.calls = root / "calls"
        self.release = root / "release"
        # Inside a tmux whose socket is here: the lock file beside it is the test's own.
        self.environ = {"TMUX": f"{root / 'socket'},1,0"}
        script = self.bin / "tmux"
        # `show-options -sv extended-keys` answers "off" once released; every call is noted.
        script.write_text(
            "#!/bin/sh\n"
            f'echo "$$ $*" >> "{self.calls}"\n'
            f'while [ ! -e "{self.release}" ]; do sleep 0.05; done\n'
            'case "$*" in "show-options -sv extended-keys") echo off ;; esac\n'
        )
        script.chmod(0o755)

    def called(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []

    def kill_all(self) -> None:
        for line in self.called():
            pid = int(line.split()[0])
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def fake_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTmux]:
    fake = FakeTmux(tmp_path)
    monkeypatch.setenv("PATH", f"{fake.bin}{os.pathsep}{os.environ['PATH']}")
    try:
        yield fake
    finally:
        fake.release.touch()
        fake.kill_all()


def _wait_for(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + JOIN_DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_restore_told_not_to_wait_leaves_a_change_under_way_alone(
    fake_tmux: FakeTmux,
) -> None:
    keys = TmuxExtendedKeys(fake_tmux.environ)
    enabling = threading.Thread(target=keys.enable, daemon=True)
    enabling.start()
    _wait_for(fake_tmux.called, "enable's first tmux call")  # enable holds its lock now

    assert keys.restore(wait=0) is False  # the exit's last resort: it does not wait
    assert enabling.is_alive()  # enable still waits on tmux: nothing waited for it

    fake_tmux.release.touch()
    enabling.join(JOIN_DEADLINE)
    assert not enabling.is_alive()
    assert keys.restore() is True  # afterwards, an ordinary restore runs


def test_a_tmux_that_stops_answering_cannot_hold_a_restore(
    fake_tmux: FakeTmux, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tmux_keys, "TMUX_CALL_SECONDS", 0.3)
    monkeypatch.setattr(tmux_keys, "TMUX_CHANGE_SECONDS", 1.0)
    keys = TmuxExtendedKeys(fake_tmux.environ)
    fake_tmux.release.touch()
    keys.enable()  # tmux answers: the option is "off", zcoder turns it on
    asked = len(fake_tmux.called())
    fake_tmux.release.unlink()  # from now on tmux never answers
    restoring = threading.Thread(target=keys.restore, daemon=True)
    restoring.start()
    restoring.join(JOIN_DEADLINE)
    assert not restoring.is_alive(), "restore waited on tmux without a bound"
    assert len(fake_tmux.called()) > asked  # it did ask tmux, which never answered
