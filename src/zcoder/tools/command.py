"""run_command: a shell command in the workspace, approved first, killed as a group.

The command runs as ``bash -c`` in its own session (so its own process group), with stdin
closed and stdout+stderr combined into one bounded head-and-tail buffer.  The whole group is
stopped (SIGTERM, then SIGKILL after a grace period) on timeout, on cancellation (the user
pressed Escape) and when the command itself has exited: background processes never outlive
the tool call, so they cannot hold the output open or leak.

The output is also reported as it is read (``on_output``, decoded text, partial lines
included), so that a front end can show it while the command runs and keep it when the
command is stopped; what was written just before a cancellation is read first.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from zcoder.tools.base import WORKSPACE_DIRECTORY, ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.confinement import ConfinedPath, ConfinementError, resolve_path
from zcoder.tools.escapees import (
    TAG_VARIABLE,
    Ended,
    become_subreaper,
    describe,
    end_tagged,
    group_alive,
    new_tag,
)
from zcoder.tools.job_tools import start_job
from zcoder.tools.jobs import COMMAND_ENVIRONMENT
from zcoder.tools.modes import Effects, Mode, plan_environment
from zcoder.tools.offload import in_thread
from zcoder.tools.output import HeadTailBuffer

__all__ = [
    "DEFAULT_COMMAND_TIMEOUT",
    "KILL_GRACE_SECONDS",
    "MAX_COMMAND_TIMEOUT",
    "RUN_COMMAND",
    "CommandOutcome",
    "OutputSink",
    "kill_process_group",
    "outcome_text",
    "run_shell",
]

log = logging.getLogger(__name__)

OutputSink = Callable[[str], None]
"""Receives a command's output as it is read: decoded text, not necessarily whole lines."""

DEFAULT_COMMAND_TIMEOUT = 120
MAX_COMMAND_TIMEOUT = 3600
KILL_GRACE_SECONDS = 2.0
"""How long a group gets between SIGTERM and SIGKILL."""
DRAIN_SECONDS = 0.5
"""How long to keep reading output after the shell exited (background writers)."""
_POLL_SECONDS = 0.02
_CHUNK = 65536


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def kill_process_group(pgid: int, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the group, wait up to ``grace`` seconds for it to go, then SIGKILL it."""
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            if not group_alive(pgid):
                return
            await asyncio.sleep(_POLL_SECONDS)
    finally:
        # Also reached when cancelled while waiting: never leave the group running.
        _signal_group(pgid, signal.SIGKILL)


class CommandOutcome:
    """What happened to one command."""

    def __init__(
        self,
        exit_code: int | None,
        output: str,
        timed_out: bool,
        duration: float,
        escaped: str = "",
    ):
        self.exit_code = exit_code
        self.output = output
        self.timed_out = timed_out
        self.duration = duration
        self.escaped = escaped  # what was ended outside the group (tools/escapees.py)


def outcome_text(outcome: CommandOutcome, timeout: float) -> str:
    """What a command's result says: its output, then how it ended on a line in brackets."""
    body = outcome.output if outcome.output else "(no output)"
    if outcome.timed_out:
        status = f"[timed out after {timeout:g} s; the command and its processes were killed]"
    else:
        status = f"[exit code {outcome.exit_code}]"
    if outcome.escaped:
        status += "\n" + outcome.escaped
    return f"{body.rstrip()}\n{status}"


async def _pump(
    stream: asyncio.StreamReader, buffer: HeadTailBuffer, on_output: OutputSink | None
) -> None:
    # One decoder for the whole stream: a character split between two reads stays whole.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    sink = on_output
    while True:
        chunk = await stream.read(_CHUNK)
        buffer.feed(chunk)
        if sink is not None:
            text = decoder.decode(chunk, final=not chunk)
            if text:
                try:
                    sink(text)
                except Exception:  # a failing listener must not stop the reading
                    log.exception("command output listener failed; no more live output")
                    sink = None
        if not chunk:
            return


async def _open_output_pipe() -> tuple[int, asyncio.StreamReader, asyncio.ReadTransport]:
    """A pipe whose write end the command gets; we own (and close) the read end.

    asyncio's own PIPE would make ``Process.wait()`` wait for every holder of the pipe to
    exit, background processes included; with our own pipe, wait() means "the shell exited".
    """
    read_fd, write_fd = os.pipe()
    try:
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
        )
    except BaseException:
        os.close(write_fd)
        with contextlib.suppress(OSError):
            os.close(read_fd)
        raise
    return write_fd, reader, transport


async def run_shell(
    command: str,
    cwd: Path,
    timeout: float,
    max_output: int,
    on_output: OutputSink | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> CommandOutcome:
    """Run ``bash -c command`` in its own process group; see the module docstring.

    ``env``: set for this command, over the process's own and COMMAND_ENVIRONMENT.

    ``on_output`` gets the output as it is read. Re-raises ``asyncio.CancelledError``
    after the whole group has been killed and what it wrote until then has been read.
    """
    started = time.monotonic()
    become_subreaper()  # orphans of the command come back to zcoder (tools/escapees.py)
    tag = new_tag()
    escaped: list[Ended] = []
    write_fd, reader, transport = await _open_output_pipe()
    try:
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
                env={**os.environ, **COMMAND_ENVIRONMENT, **(env or {}), TAG_VARIABLE: tag},
            )
        )
        try:
            # Shielded: a cancel that lands while the shell is being started must not let
            # asyncio's own clean-up kill only the shell and orphan what it started.
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                started_proc = await spawn
                _signal_group(started_proc.pid, signal.SIGKILL)
                await started_proc.wait()
            raise
        finally:
            os.close(write_fd)
        pgid = proc.pid  # start_new_session: the shell leads its own group
        buffer = HeadTailBuffer(max_output)
        pump = asyncio.create_task(_pump(reader, buffer, on_output))
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    await proc.wait()
            except TimeoutError:
                timed_out = True
                await kill_process_group(pgid)
                await proc.wait()
            # Output that background processes write just before or after the shell exits.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(DRAIN_SECONDS):
                    await asyncio.shield(pump)
            await kill_process_group(pgid)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(DRAIN_SECONDS):
                    await asyncio.shield(pump)
        except asyncio.CancelledError:
            _signal_group(pgid, signal.SIGTERM)
            try:
                await kill_process_group(pgid)
                await proc.wait()
                # What the group wrote before it died is still in the pipe: it is kept.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(DRAIN_SECONDS):
                        await asyncio.shield(pump)
            finally:
                _signal_group(pgid, signal.SIGKILL)
            raise
        finally:
            escaped = end_tagged(tag)  # whatever left the group, on every path
            if not pump.done():
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
    finally:
        transport.close()
    return CommandOutcome(
        None if timed_out else proc.returncode,
        buffer.text(),
        timed_out,
        time.monotonic() - started,
        describe(escaped),
    )


def _resolve_cwd(ctx: ToolContext, raw: str) -> tuple[ConfinedPath, bool]:
    cwd = resolve_path(ctx.workspace, raw)
    return cwd, cwd.absolute.is_dir()


async def _run_command(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    command: str = args["command"]
    timeout = args["timeout_seconds"]
    if not command.strip():
        return ToolResult.error("command is empty")
    if "\x00" in command:
        return ToolResult.error("command contains a NUL byte")
    try:
        # Resolving walks the path: off the event loop, as every file-system step of a tool.
        cwd, is_dir = await in_thread(ctx.stop, lambda: _resolve_cwd(ctx, args["cwd"]))
    except ConfinementError as exc:
        return ToolResult.error(str(exc))
    if not is_dir:
        return ToolResult.error(f"cwd {args['cwd']!r} is not a directory in the workspace")
    background = bool(args.get("background"))
    authorization = await ctx.approval.authorize(
        command,
        cwd=cwd.absolute,
        timeout_seconds=timeout,
        origin=ctx.origin,
        approver=ctx.approver,
        workspace=ctx.workspace,
        requested_by=ctx.requested_by,
        hook=ctx.hook_permission,
        background=background,
    )
    base_meta: dict[str, Any] = {
        "command": command,
        "cwd": cwd.display,
        "approval": authorization.reason,
        "asked": authorization.asked,
    }
    if not authorization.allowed:
        return ToolResult.error(
            f"the command was not run: {authorization.reason}", **base_meta, refused=True
        )
    if background:
        return await start_job(command, cwd.absolute, ctx, base_meta)
    try:
        planning = ctx.approval.mode is Mode.PLAN
        outcome = await run_shell(
            command,
            cwd.absolute,
            float(timeout),
            ctx.max_output,
            ctx.on_output,
            env=plan_environment(os.environ) if planning else None,
        )
    except OSError as exc:
        return ToolResult.error(f"could not start bash: {exc}", **base_meta)
    meta = {
        **base_meta,
        "exit_code": outcome.exit_code,
        "timed_out": outcome.timed_out,
        "duration_seconds": round(outcome.duration, 3),
    }
    ok = outcome.exit_code == 0 and not outcome.timed_out
    return ToolResult(ok, outcome_text(outcome, timeout), meta)


RUN_COMMAND = ToolSpec(
    name="run_command",
    description=(
        "Run a bash command in the workspace (or cwd below it); returns its output and exit "
        "code. No stdin; background processes are stopped."
    ),
    parameters=arguments(
        {
            "command": {"type": "string", "description": "The bash command line"},
            "cwd": WORKSPACE_DIRECTORY,
            "background": {"type": "boolean", "description": "keep it running (a server)"},
            "timeout_seconds": {
                "type": "integer",
                "description": "Kill the command after this many seconds",
                "default": DEFAULT_COMMAND_TIMEOUT,
                "minimum": 1,
                "maximum": MAX_COMMAND_TIMEOUT,
            },
        },
        required=["command"],
    ),
    handler=_run_command,
    effects=Effects.CHECKED,  # plan mode: read-only commands only (ApprovalPolicy)
)
