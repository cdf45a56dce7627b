"""run_command: real bash processes, bounded output, timeouts and cancellation kill the group."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.processes import pid_alive
from zcoder.tools import CommandPolicy, ToolContext, ToolResult, default_registry
from zcoder.tools.command import run_shell

REGISTRY = default_registry()


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


async def run(ctx: ToolContext, command: str, **args: object) -> ToolResult:
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


# -- output as it is printed ----------------------------------------------------------

WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.02; done"


async def wait_for_text(pieces: list[str], fragment: str, deadline: float = 10.0) -> None:
    end = time.monotonic() + deadline
    while fragment not in "".join(pieces):
        if time.monotonic() > end:
            raise AssertionError(f"{fragment!r} never reported; got {''.join(pieces)!r}")
        await asyncio.sleep(0.01)


def start_live(ctx: ToolContext, command: str) -> tuple[list[str], asyncio.Task[ToolResult]]:
    """``command`` started as a task; each piece of output is added to the list as printed."""
    pieces: list[str] = []
    live = dataclasses.replace(ctx, on_output=pieces.append)
    return pieces, asyncio.create_task(run(live, command))


async def let_go(ctx: ToolContext, task: asyncio.Task[ToolResult]) -> ToolResult:
    """Create the file WAIT_FOR_GO waits for, and wait for the command's result."""
    (ctx.workspace / "go").touch()
    return await asyncio.wait_for(task, 10)


async def test_output_is_reported_while_the_command_runs(ctx: ToolContext) -> None:
    pieces, task = start_live(ctx, f"echo step 1; {WAIT_FOR_GO}; echo step 2")
    await wait_for_text(pieces, "step 1\n")
    # The command cannot have ended: it waits for a file only this test creates.
    assert not task.done()
    assert "step 2" not in "".join(pieces)
    result = await let_go(ctx, task)
    assert "".join(pieces) == "step 1\nstep 2\n"
    assert result.ok and result.output == "step 1\nstep 2\n[exit code 0]"


async def test_a_partial_last_line_is_reported_before_its_line_feed(ctx: ToolContext) -> None:
    pieces, task = start_live(ctx, f"printf 'Downloading... '; {WAIT_FOR_GO}; echo done")
    await wait_for_text(pieces, "Downloading... ")
    assert not task.done()
    await let_go(ctx, task)
    assert "".join(pieces) == "Downloading... done\n"


async def test_a_character_split_between_two_writes_arrives_whole(ctx: ToolContext) -> None:
    pieces, task = start_live(ctx, f"printf 'caf\\303'; {WAIT_FOR_GO}; printf '\\251!'")
    await wait_for_text(pieces, "caf")
    await let_go(ctx, task)
    assert "".join(pieces) == "café!"
    assert "\ufffd" not in "".join(pieces)


async def test_output_written_just_before_a_cancel_is_still_reported(ctx: ToolContext) -> None:
    """Output still in the pipe when the cancel comes is read before the re-raise.

    The event loop is blocked (a synchronous wait) from the moment the command runs until
    it has written its last words and signalled with a file, so nothing can have read them
    when the task is cancelled."""
    command = f"echo started; {WAIT_FOR_GO}; echo last words; touch written; sleep 300"
    pieces, task = start_live(ctx, command)
    await wait_for_text(pieces, "started\n")
    (ctx.workspace / "go").touch()
    deadline = time.monotonic() + 10
    while not (ctx.workspace / "written").exists():  # the loop (and the reader) wait too
        assert time.monotonic() < deadline, "the command never wrote its last words"
        time.sleep(0.01)
    assert "last words" not in "".join(pieces)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "".join(pieces) == "started\nlast words\n"


async def test_all_of_a_huge_output_is_reported_though_the_result_is_bounded(
    make_ctx,
) -> None:
    pieces: list[str] = []
    ctx = dataclasses.replace(make_ctx(max_output=4096), on_output=pieces.append)
    result = await run(ctx, "seq 1 200000")
    expected = "".join(f"{n}\n" for n in range(1, 200001))
    assert "".join(pieces) == expected
    assert len(result.output.encode()) <= 4096 + 200
    assert result.output.endswith("199999\n200000\n[exit code 0]")


async def test_a_failing_listener_does_not_stop_the_command(ctx: ToolContext) -> None:
    calls: list[str] = []

    def broken(text: str) -> None:
        calls.append(text)
        raise RuntimeError("listener bug")

    live = dataclasses.replace(ctx, on_output=broken)
    result = await asyncio.wait_for(run(live, "seq 1 100000 | tr -d '\\n' ; echo; echo end"), 20)
    assert result.ok and result.output.endswith("end\n[exit code 0]")
    assert len(calls) == 1  # not called again after it failed


async def test_run_shell_reports_output_without_the_registry(ctx: ToolContext) -> None:
    pieces: list[str] = []
    outcome = await run_shell("echo a; echo b >&2", ctx.workspace, 10, 1024, pieces.append)
    assert outcome.exit_code == 0
    assert "".join(pieces) == outcome.output == "a\nb\n"


async def test_python_output_is_reported_as_printed_not_at_exit(ctx: ToolContext) -> None:
    script = (
        "import os, time\nprint('py step 1')\nwhile not os.path.exists('go'): time.sleep(0.02)\n"
    )
    (ctx.workspace / "steps.py").write_text(script)
    pieces, task = start_live(ctx, f"{sys.executable} steps.py")
    await wait_for_text(pieces, "py step 1\n")
    assert not task.done()
    assert (await let_go(ctx, task)).ok
