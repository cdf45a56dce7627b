"""run_command: real bash processes, bounded output, timeouts and cancellation kill the group."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from zcoder.tools import CommandPolicy, ToolContext, default_registry
from zcoder.tools.command import run_shell

REGISTRY = default_registry()


def pid_alive(pid: int) -> bool:
    """A pid counts as gone once it no longer exists or is a zombie (init may not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def wait_for_pids(path: Path, count: int, deadline: float = 10.0) -> list[int]:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if path.exists():
            pids = [int(line) for line in path.read_text().split() if line.strip()]
            if len(pids) >= count:
                return pids
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never listed {count} pids")


async def wait_gone(pids: list[int], deadline: float = 5.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if not any(pid_alive(pid) for pid in pids):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"still alive: {[pid for pid in pids if pid_alive(pid)]}")


SPAWN = (
    "echo $$ > pids; sleep 300 & echo $! >> pids; (sleep 300 &) ; sleep 300 & echo $! >> pids; wait"
)


async def run(ctx: ToolContext, command: str, **args: object):
    return await REGISTRY.dispatch("run_command", {"command": command, **args}, ctx)


async def test_runs_in_workspace_with_combined_output_and_exit_code(ctx: ToolContext) -> None:
    result = await run(ctx, "pwd; echo out; echo err >&2; exit 3")
    assert not result.ok
    assert result.output.splitlines() == [str(ctx.workspace), "out", "err", "[exit code 3]"]
    assert result.metadata["exit_code"] == 3
    assert result.metadata["timed_out"] is False


async def test_success_is_ok(ctx: ToolContext) -> None:
    result = await run(ctx, "true")
    assert result.ok and result.output == "(no output)\n[exit code 0]"


async def test_cwd_is_confined_and_used(ctx: ToolContext) -> None:
    (ctx.workspace / "sub").mkdir()
    result = await run(ctx, "pwd", cwd="sub")
    assert result.output.splitlines()[0] == str(ctx.workspace / "sub")
    for bad in ("..", "/", "missing"):
        refused = await run(ctx, "pwd", cwd=bad)
        assert not refused.ok and "exit code" not in refused.output


async def test_stdin_is_closed(ctx: ToolContext) -> None:
    result = await asyncio.wait_for(run(ctx, "cat; echo done"), 10)
    assert result.ok and result.output.startswith("done")


async def test_huge_output_is_bounded_head_and_tail(make_ctx) -> None:
    ctx = make_ctx(max_output=4096)
    result = await run(ctx, "echo FIRST; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo LAST")
    assert result.ok
    assert result.output.startswith("FIRST")
    assert "LAST\n[exit code 0]" in result.output
    assert "bytes omitted" in result.output
    assert len(result.output.encode()) <= 4096 + 200


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await run(ctx, SPAWN, timeout_seconds=1)
    assert time.monotonic() - started < 10
    assert not result.ok
    assert result.metadata["timed_out"] is True
    assert "timed out" in result.output
    pids = await wait_for_pids(ctx.workspace / "pids", 3)
    await wait_gone(pids)


async def test_cancellation_kills_the_group_and_reraises(ctx: ToolContext) -> None:
    task = asyncio.create_task(run(ctx, SPAWN))
    pids = await wait_for_pids(ctx.workspace / "pids", 3)
    assert all(pid_alive(pid) for pid in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_gone(pids)


async def test_term_resistant_group_gets_sigkill(ctx: ToolContext) -> None:
    command = (
        "trap '' TERM; echo $$ > pids; sleep 300 & echo $! >> pids; while true; do sleep 1; done"
    )
    result = await run(ctx, command, timeout_seconds=1)
    assert result.metadata["timed_out"] is True
    await wait_gone(await wait_for_pids(ctx.workspace / "pids", 2))


async def test_background_processes_do_not_outlive_the_command(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await run(ctx, "sleep 300 & echo $! > pids; echo started")
    assert time.monotonic() - started < 6
    assert result.ok and result.output.startswith("started")
    await wait_gone(await wait_for_pids(ctx.workspace / "pids", 1))


async def test_run_shell_directly(workspace: Path) -> None:
    outcome = await run_shell("printf 'a\\nb'", workspace, 10, 1000)
    assert outcome.exit_code == 0 and outcome.output == "a\nb" and not outcome.timed_out


async def test_denied_command_does_not_run(make_ctx) -> None:
    ctx = make_ctx(policy=CommandPolicy.DENY)
    result = await run(ctx, "touch ran")
    assert not result.ok and "--deny-commands" in result.output
    assert result.metadata["refused"] is True
    assert not (ctx.workspace / "ran").exists()


@pytest.mark.parametrize("command", ["", "   ", "echo \x00"])
async def test_empty_or_nul_command_is_an_error(ctx: ToolContext, command: str) -> None:
    result = await run(ctx, command)
    assert not result.ok


async def test_timeout_bounds_are_validated(ctx: ToolContext) -> None:
    assert "at least 1" in (await run(ctx, "true", timeout_seconds=0)).output
    assert "at most" in (await run(ctx, "true", timeout_seconds=10**6)).output
