"""tmux's ``extended-keys`` server option (zcoder.tui.state.tmux_keys) against a private, real
tmux server: on while zcoders run, restored by the last to leave, and the shared
bookkeeping kept whole when several zcoders (real processes) enter and leave at once
(issue 27 item 16: two quitting together left it on, a pid dropped out of the list).

Nothing is timed: each step waits for the processes to say they are done."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from zcoder.tui.state.tmux_keys import TmuxExtendedKeys, lock_path

TMUX = shutil.which("tmux")


@pytest.fixture
def tmux_server(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A private tmux server; the environment of a program running inside it."""
    if TMUX is None:
        pytest.skip("tmux is not installed")
    socket = tmp_path / "tmux.sock"
    base = [TMUX, "-S", str(socket)]
    subprocess.run([*base, "-f", "/dev/null", "new-session", "-d", "-s", "t"], check=True)
    pid = subprocess.run(
        [*base, "display-message", "-p", "#{pid}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {"TMUX": f"{socket},{pid},0"}
    try:
        yield env
    finally:
        subprocess.run([*base, "kill-server"], check=False, capture_output=True)


def option(env: dict[str, str], name: str) -> str | None:
    assert TMUX is not None
    done = subprocess.run(
        [TMUX, "show-options", "-sv", name],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.fixture
def in_tmux(tmux_server: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("TMUX", tmux_server["TMUX"])
    return tmux_server


def test_extended_keys_on_while_running_and_restored_after(in_tmux: dict[str, str]) -> None:
    assert option(in_tmux, "extended-keys") == "off"
    keys = TmuxExtendedKeys()
    keys.enable()
    assert option(in_tmux, "extended-keys") == "on"
    keys.restore()
    assert option(in_tmux, "extended-keys") == "off"
    assert option(in_tmux, "@zcoder-extended-keys-users") is None
    keys.restore()  # idempotent
    assert option(in_tmux, "extended-keys") == "off"


def test_a_value_set_by_the_user_is_left_as_it_was(in_tmux: dict[str, str]) -> None:
    subprocess.run([TMUX or "tmux", "set-option", "-s", "extended-keys", "always"], check=True)
    keys = TmuxExtendedKeys()
    keys.enable()
    assert option(in_tmux, "extended-keys") == "always"
    keys.restore()
    assert option(in_tmux, "extended-keys") == "always"


def test_the_last_zcoder_of_a_tmux_server_restores_the_option(
    in_tmux: dict[str, str], tmp_path: Path
) -> None:
    # Another zcoder of the same server: a real process that enables and waits.
    script = (
        "import sys, time\n"
        "from zcoder.tui.terminal import TmuxExtendedKeys\n"
        "keys = TmuxExtendedKeys(); keys.enable(); print('on', flush=True)\n"
        "sys.stdin.readline(); keys.restore()\n"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **in_tmux},
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "on"
        mine = TmuxExtendedKeys()
        mine.enable()
        assert option(in_tmux, "extended-keys") == "on"
        mine.restore()  # the other zcoder still relies on it
        assert option(in_tmux, "extended-keys") == "on"
        assert other.stdin is not None
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.wait(timeout=10) == 0
        assert option(in_tmux, "extended-keys") == "off"
    finally:
        other.kill()
        other.wait()


def test_a_killed_zcoder_does_not_leave_its_value_behind(in_tmux: dict[str, str]) -> None:
    script = (
        "import os, signal\n"
        "from zcoder.tui.terminal import TmuxExtendedKeys\n"
        "TmuxExtendedKeys().enable(); os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, **in_tmux},
        check=False,
    )
    assert killed.returncode < 0
    assert option(in_tmux, "extended-keys") == "on"  # nothing ran to restore it
    keys = TmuxExtendedKeys()
    keys.enable()
    keys.restore()
    assert option(in_tmux, "extended-keys") == "off"  # the value found before the killed one


def test_outside_tmux_nothing_is_changed(tmux_server: dict[str, str]) -> None:
    keys = TmuxExtendedKeys(environ={})
    keys.enable()
    assert option(tmux_server, "extended-keys") == "off"
    keys.restore()


# -- several zcoders at once ------------------------------------------------------------

ZCODERS = 6
ROUNDS = 3
STEP_TIMEOUT = 60.0  # generous: a deadline for a hung process, never a measure

# One zcoder's share of the bookkeeping, driven line by line from stdin: "enable" and
# "restore" each answer "done" once finished; the process ends after restoring.
_ZCODER = """
import sys
from zcoder.tui.state.tmux_keys import TmuxExtendedKeys
keys = TmuxExtendedKeys()
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "enable":
        keys.enable()
    else:
        keys.restore()
    print("done", flush=True)
    if line.strip() == "restore":
        break
"""


class Zcoders:
    """Real processes sharing one tmux server, each told what to do at the same moment."""

    def __init__(self, env: dict[str, str], count: int) -> None:
        self.procs = [
            subprocess.Popen(
                [sys.executable, "-c", _ZCODER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, **env},
            )
            for _ in range(count)
        ]
        self._answer("ready", self.procs)

    @property
    def pids(self) -> set[int]:
        return {proc.pid for proc in self.procs}

    def all(self, command: str, procs: list[subprocess.Popen[str]] | None = None) -> None:
        """``command`` to every one of ``procs`` (all by default) before any answer is read,
        so they run it at once; then wait until each has done it."""
        chosen = self.procs if procs is None else procs
        for proc in chosen:
            assert proc.stdin is not None
            proc.stdin.write(command + "\n")
            proc.stdin.flush()
        self._answer("done", chosen)

    def _answer(self, word: str, procs: list[subprocess.Popen[str]]) -> None:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == word

    def wait(self, procs: list[subprocess.Popen[str]]) -> None:
        for proc in procs:
            assert proc.wait(timeout=STEP_TIMEOUT) == 0

    def kill(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


def users(env: dict[str, str]) -> set[int]:
    return {int(word) for word in (option(env, "@zcoder-extended-keys-users") or "").split()}


def test_zcoders_entering_and_leaving_at_once_lose_no_pid_and_restore_the_option(
    tmux_server: dict[str, str],
) -> None:
    for _round in range(ROUNDS):
        zcoders = Zcoders(tmux_server, ZCODERS)
        try:
            zcoders.all("enable")
            assert users(tmux_server) == zcoders.pids  # no pid lost
            assert option(tmux_server, "extended-keys") == "on"
            zcoders.all("restore")
            zcoders.wait(zcoders.procs)
            assert option(tmux_server, "extended-keys") == "off"
            assert option(tmux_server, "@zcoder-extended-keys-users") is None
            assert option(tmux_server, "@zcoder-extended-keys-before") is None
        finally:
            zcoders.kill()


def test_zcoders_leaving_while_others_enter_leave_the_option_to_those_still_running(
    tmux_server: dict[str, str],
) -> None:
    for _round in range(ROUNDS):
        zcoders = Zcoders(tmux_server, ZCODERS)
        early, late = zcoders.procs[: ZCODERS // 2], zcoders.procs[ZCODERS // 2 :]
        try:
            zcoders.all("enable", early)
            for proc in zcoders.procs:  # the early ones leave as the late ones come
                assert proc.stdin is not None
                proc.stdin.write(("restore" if proc in early else "enable") + "\n")
                proc.stdin.flush()
            zcoders._answer("done", zcoders.procs)
            zcoders.wait(early)
            assert users(tmux_server) == {proc.pid for proc in late}
            assert option(tmux_server, "extended-keys") == "on"
            zcoders.all("restore", late)
            zcoders.wait(late)
            assert option(tmux_server, "extended-keys") == "off"
            assert option(tmux_server, "@zcoder-extended-keys-users") is None
        finally:
            zcoders.kill()


def test_the_lock_is_beside_the_servers_socket_and_only_this_users_own_file(
    in_tmux: dict[str, str], tmp_path: Path
) -> None:
    socket = in_tmux["TMUX"].split(",")[0]
    assert lock_path(in_tmux) == socket + ".zcoder-keys.lock"
    assert lock_path({}) is None
    keys = TmuxExtendedKeys()
    keys.enable()
    keys.restore()
    info = Path(socket + ".zcoder-keys.lock").stat()
    assert info.st_mode & 0o777 == 0o600
    # A lock path that is a symlink planted by someone else is not followed.
    target = tmp_path / "elsewhere"
    planted = tmp_path / "planted.sock"
    (tmp_path / "planted.sock.zcoder-keys.lock").symlink_to(target)
    elsewhere = TmuxExtendedKeys({"TMUX": f"{planted},1,0"})  # tmux itself: in_tmux's
    elsewhere.enable()
    elsewhere.restore()
    assert not target.exists()
    assert option(in_tmux, "extended-keys") == "off"
