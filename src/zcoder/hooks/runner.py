"""Running one hook command: JSON in on standard input, a deadline, bounded output.

A hook is the user's own program (or, with consent, the project's), so it runs as a shell
command in the workspace, as Claude Code runs it, with ``$ZCODER_PROJECT_DIR`` (and
``$CLAUDE_PROJECT_DIR``, so existing scripts work) set to the workspace. It runs in a
session of its own: at its deadline the whole process group is killed, so a hook that
starts a background child cannot outlive it or hold zcoder up. What it prints is kept up to
a bound and the rest is read and dropped, so a hook that floods its output neither blocks
on a full pipe nor fills zcoder's memory. Reading its output is bounded by the same
deadline: a child that left the group (a new session of its own) and still holds the
hook's output open is not waited for past it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

MAX_OUTPUT_BYTES: Final = 64 * 1024
SHELL: Final = "/bin/sh"


@dataclass(frozen=True)
class HookRun:
    """How one hook command ended."""

    exit_code: int | None  # None: it did not end by itself (timed out, or failed to start)
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""  # why it could not run at all


# After the hook ended (or was killed), how long its output may still take to end when
# its deadline has already passed.
READ_GRACE_SECONDS: Final = 0.5


async def _drain(stream: asyncio.StreamReader | None, kept: bytearray) -> None:
    """Read ``stream`` to its end, keeping its first MAX_OUTPUT_BYTES in ``kept`` (what
    was kept stays there if the read is given up)."""
    if stream is None:
        return
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        if len(kept) < MAX_OUTPUT_BYTES:
            kept += chunk[: MAX_OUTPUT_BYTES - len(kept)]


async def _read_until(
    process: asyncio.subprocess.Process, readers: asyncio.Future[Any], deadline: float
) -> None:
    """Wait for the output to end, at most until ``deadline`` (or a short grace); past it,
    zcoder's ends of the pipes are closed (whoever holds the other ends)."""
    loop = asyncio.get_running_loop()
    try:
        await asyncio.wait_for(readers, max(READ_GRACE_SECONDS, deadline - loop.time()))
    except TimeoutError:
        # asyncio.subprocess.Process has no public close: its transport's closes the pipes.
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def run_hook(
    command: str, payload: dict[str, Any], workspace: Path, timeout: float
) -> HookRun:
    """Run ``command`` with ``payload`` as JSON on its standard input, for at most
    ``timeout`` seconds."""
    env = {
        **os.environ,
        "ZCODER_PROJECT_DIR": str(workspace),
        "CLAUDE_PROJECT_DIR": str(workspace),
        "ZCODER_HOOK_EVENT": str(payload.get("hook_event_name", "")),
    }
    try:
        process = await asyncio.create_subprocess_exec(
            SHELL,
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=workspace,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(None, "", "", error=f"it could not start: {exc.strerror or exc}")
    deadline = asyncio.get_running_loop().time() + timeout
    data = json.dumps(payload, ensure_ascii=False).encode()
    out, err = bytearray(), bytearray()
    readers = asyncio.gather(_drain(process.stdout, out), _drain(process.stderr, err))

    async def feed_and_wait() -> int:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(data)
            await process.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.close()
        return await process.wait()

    try:
        code = await asyncio.wait_for(feed_and_wait(), timeout)
    except TimeoutError:
        _kill_group(process)
        await process.wait()
        await _read_until(process, readers, deadline)
        return HookRun(None, _text(out), _text(err), timed_out=True)
    except asyncio.CancelledError:
        _kill_group(process)
        with contextlib.suppress(Exception):
            await asyncio.shield(process.wait())
        readers.cancel()
        raise
    _kill_group(process)  # a child it left running in its group goes with it
    await _read_until(process, readers, deadline)
    return HookRun(code, _text(out), _text(err))


def _text(data: bytes | bytearray) -> str:
    return data.decode("utf-8", errors="replace")
