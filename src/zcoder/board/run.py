"""``zcoder tasks claim ID|--next -- COMMAND``: a claim held while a command works on it.

This process holds the claim (its lock is close-on-exec and the command is started with
no descriptor but the standard three), so the claim lives exactly as long as this process:
killed, even with SIGKILL, the task is free again at once, whether or not the command goes
on running. The command gets the task in ``$ZCODER_TASK_ID`` (and its title in
``$ZCODER_TASK_TITLE``); exiting 0 marks the task done, anything else opens it again with a
note of how it ended.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Mapping, Sequence
from typing import Final

from zcoder.board.records import State
from zcoder.board.store import Claim

FORWARDED: Final = (signal.SIGTERM, signal.SIGHUP)
"""Signals passed on to the command; the claim ends when the command does."""


def how_it_ended(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the command was ended by {name}"
    return f"the command exited with status {returncode}"


def run_claimed(claim: Claim, command: Sequence[str], env: Mapping[str, str], who: str) -> int:
    """Run ``command`` for ``claim`` and settle the task by its exit; its exit status."""
    child_env = dict(env)
    child_env["ZCODER_TASK_ID"] = str(claim.task_id)
    child_env["ZCODER_TASK_TITLE"] = claim.task.title
    try:
        process = subprocess.Popen(list(command), env=child_env, close_fds=True)
    except OSError as exc:
        claim.settle(State.OPEN, f"the command could not start: {exc.strerror}", who)
        raise
    previous = {number: signal.getsignal(number) for number in FORWARDED}

    def forward(number: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(number)

    for number in FORWARDED:
        signal.signal(number, forward)
    try:
        while True:
            try:
                returncode = process.wait()
                break
            except KeyboardInterrupt:  # the command got Ctrl+C too: see how it ends
                continue
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if returncode == 0:
        claim.settle(State.DONE, "", who)
        return 0
    claim.settle(State.OPEN, f"{how_it_ended(returncode)}; open again", who)
    return 128 - returncode if returncode < 0 else returncode
