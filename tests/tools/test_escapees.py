"""Processes that leave a command's process group are ended with it, on every path."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.e2e.harness import wait_until
from zcoder.tools.command import run_shell


def _state(pid: int) -> str | None:
    """The process's state letter, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()[0]


def _ended(pid: int) -> bool:
    return _state(pid) in (None, "Z", "X")


def _pid_from(path: Path) -> int:
    def written() -> str | None:
        text = path.read_text().strip() if path.exists() else ""
        return text or None

    return int(wait_until(written, what="the pid"))


ESCAPES = {
    "setsid": "setsid sh -c 'echo $$ > {pf}; exec sleep 600' &",
    "double fork": "( setsid sh -c 'echo $$ > {pf}; exec sleep 600' & ) &",
    "nohup": "nohup setsid sh -c 'echo $$ > {pf}; exec sleep 600' > /dev/null 2>&1 &",
}


@pytest.mark.parametrize("how", list(ESCAPES))
async def test_an_escaped_process_is_ended_when_the_command_ends(tmp_path: Path, how: str) -> None:
    pf = tmp_path / "pid"
    command = ESCAPES[how].format(pf=pf) + f"\nwhile [ ! -s {pf} ]; do sleep 0.05; done"
    outcome = await run_shell(command, tmp_path, 30, 65536)
    pid = _pid_from(pf)
    assert outcome.exit_code == 0
    wait_until(lambda: _ended(pid), timeout=10, what="the escaped process to end")
    assert f"pid {pid}" in outcome.escaped and "left the command's process group" in (
        outcome.escaped
    )
    # Reaped, not left a zombie (zcoder is the subreaper of its commands' orphans).
    assert wait_until(lambda: _state(pid) is None, timeout=10, what="the process to be reaped")


async def test_an_escaped_process_is_ended_on_timeout(tmp_path: Path) -> None:
    pf = tmp_path / "pid"
    command = ESCAPES["setsid"].format(pf=pf) + "\nsleep 600"
    outcome = await run_shell(command, tmp_path, 1, 65536)
    assert outcome.timed_out
    pid = _pid_from(pf)
    wait_until(lambda: _ended(pid), timeout=10, what="the escaped process to end")


async def test_an_escaped_process_is_ended_when_the_command_is_cancelled(
    tmp_path: Path,
) -> None:
    pf = tmp_path / "pid"
    command = ESCAPES["double fork"].format(pf=pf) + "\nsleep 600"
    task = asyncio.create_task(run_shell(command, tmp_path, 60, 65536))
    pid = await asyncio.to_thread(_pid_from, pf)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    wait_until(lambda: _ended(pid), timeout=10, what="the escaped process to end")


async def test_processes_outside_the_command_are_never_touched(tmp_path: Path) -> None:
    bystander = await asyncio.create_subprocess_exec("sleep", "600", start_new_session=True)
    try:
        outcome = await run_shell("setsid sleep 0.1 & echo done", tmp_path, 30, 65536)
        assert outcome.exit_code == 0
        assert _state(bystander.pid) not in (None, "Z", "X")
        assert os.getpgid(bystander.pid) == bystander.pid
    finally:
        bystander.kill()
        await bystander.wait()
