from __future__ import annotations

import os
import subprocess
import sys
import time

from zcoder.sessions.liveness import current_stamp, is_alive


def test_this_process_is_alive() -> None:
    me = current_stamp()
    assert me.pid == os.getpid()
    assert is_alive(me.pid, me.token)


def test_a_pid_that_no_longer_exists_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    assert not is_alive(child.pid, "")


def test_live_process_is_alive_and_a_reused_pid_is_not_the_same_process() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=-1)
    try:
        from zcoder.sessions import liveness

        token = liveness._token_for(child.pid)
        assert is_alive(child.pid, token)
        assert is_alive(child.pid, "")
        if token:  # /proc available: a different start time means another process
            assert not is_alive(child.pid, token + "0")
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)


def test_an_exited_child_not_yet_reaped_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 30
        while is_alive(child.pid, "") and time.monotonic() < deadline:
            time.sleep(0.02)  # it exits, and stays a zombie until we wait for it
        assert not is_alive(child.pid, "")
    finally:
        child.wait(timeout=30)


def test_pids_that_cannot_be_processes_are_dead() -> None:
    assert not is_alive(0, "")
    assert not is_alive(-1, "")
