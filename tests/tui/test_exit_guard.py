"""The exit guard's last resort ends the process whatever its cleanup waits for.

Each case runs in a child process of its own (the last resort calls ``os._exit``), and the
test waits, with a generous deadline, for that child to end with the signal's status.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Far above the guard's own times (3 s grace, 5 s last resort): only a process that would
# never end fails this.
DEADLINE = 60.0
SRC = Path(__file__).resolve().parents[2] / "src"

# A cleanup that waits on a lock the main thread holds: the main thread holds it while it
# "restores" (a slow tmux, here a sleep), and is interrupted there by the signals.
SELF_DEADLOCK = """
    import os, signal, sys, threading, time
    from zcoder.tui.state.exit_guard import ExitGuard

    held = threading.Lock()

    def cleanup():
        with held:  # the same non-reentrant lock, in the same thread: waits for ever
            pass

    ExitGuard(lambda status: None, cleanup, grace=0.5, last_resort_grace=0.5).install()
    with held:
        print("holding", flush=True)
        time.sleep(600)
"""

# A cleanup stuck in a child process that never answers, in the guard's thread.
STUCK_CHILD = """
    import subprocess, time
    from zcoder.tui.state.exit_guard import ExitGuard

    def cleanup():
        subprocess.run(["sleep", "600"])

    ExitGuard(lambda status: None, cleanup, grace=0.5, last_resort_grace=0.5).install()
    print("holding", flush=True)
    time.sleep(600)
"""


def _run(script: str, signals: list[int]) -> int:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline() == b"holding\n"
            for signum in signals:
                child.send_signal(signum)
            return child.wait(timeout=DEADLINE)
        finally:
            # The child, if it is still there, and what it left (the stuck `sleep`).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()


SIGNALS = [[signal.SIGHUP], [signal.SIGHUP, signal.SIGTERM]]
IDS = ["one signal", "a second signal"]


@pytest.mark.parametrize("signals", SIGNALS, ids=IDS)
def test_a_cleanup_waiting_on_a_lock_its_own_thread_holds_cannot_keep_the_process(
    signals: list[int],
) -> None:
    assert _run(SELF_DEADLOCK, signals) in [128 + signum for signum in signals]


@pytest.mark.parametrize("signals", SIGNALS, ids=IDS)
def test_a_cleanup_stuck_in_a_child_process_cannot_keep_the_process(
    signals: list[int],
) -> None:
    assert _run(STUCK_CHILD, signals) in [128 + signum for signum in signals]
