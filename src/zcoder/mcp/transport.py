"""A stdio transport for MCP servers that bounds what a server can make zcoder hold.

The SDK's own ``stdio_client`` reads the server's standard output a line at a time with no
bound: one line of 100 MB is kept whole (and re-joined chunk after chunk), then parsed into
objects several times its size. A server zcoder runs is not necessarily one the user can
vouch for, and one bad reply must not take the whole program's memory. So this transport
reads raw bytes and keeps at most ``max_message`` bytes of any one line: a longer line is
skipped to its end, and the request it answers gets a JSON-RPC error in its place (its id
is read from the line's first or last bytes, where JSON-RPC writers put it), so the call
fails at once with the reason rather than waiting for its deadline.

It also keeps the server's standard error to itself: inherited, it would write over the
TUI. Its last few KB are kept, because they usually say why a server that died did so.

The process starts in its own session (its own process group) and shutdown follows the
spec: close its standard input, wait a little, then SIGTERM and SIGKILL the whole group, so
neither the server nor anything it started outlives zcoder's use of it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import _parse_line  # the SDK's own parsing, errors as values
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import ErrorData, JSONRPCError

__all__ = ["DEFAULT_MAX_MESSAGE", "ServerProcess", "bounded_stdio_client"]

DEFAULT_MAX_MESSAGE = 8 * 1024 * 1024
"""The longest message (one line of JSON) kept from a server, in bytes."""
STDERR_KEPT = 4096
EXIT_GRACE = 1.0
"""Seconds a server gets to exit by itself once its standard input is closed."""
KILL_GRACE = 1.0
_CHUNK = 65536
_EDGE = 512
_HEAD_ID = re.compile(rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")')
_TAIL_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")\s*\}\s*$')


@dataclass
class ServerProcess:
    """What the caller may know of the running server: its pid and its last words."""

    pid: int = 0
    stderr_tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0
    """How many over-long messages were dropped."""
    exited: bool = False
    """The server was stopped and reaped: its pid may belong to another process now."""

    def last_words(self) -> str:
        """The end of the server's standard error, for a failure's reason."""
        text = self.stderr_tail.decode("utf-8", errors="replace").strip()
        return text[-1000:]


def _oversized_error(head: bytes, tail: bytes, size: int, limit: int) -> object:
    """The JSON-RPC error that stands in for a dropped line, or an exception without id."""
    found = _TAIL_ID.search(tail) or _HEAD_ID.search(head)
    reason = (
        f"the server sent a message of {size} bytes, over zcoder's limit of {limit} bytes; "
        "it was dropped"
    )
    if found is None:
        return ValueError(reason)
    raw = found.group(1).decode("utf-8", errors="replace")
    request_id: int | str = raw.strip('"') if raw.startswith('"') else int(raw)
    error = JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=-32603, message=reason))
    return SessionMessage(error)


async def _read_messages(
    stdout: anyio.abc.ByteReceiveStream,
    sink: MemoryObjectSendStream[object],
    limit: int,
    info: ServerProcess,
    ended: anyio.Event | None,
) -> None:
    """Split stdout into lines of at most ``limit`` bytes and hand each on, parsed;
    ``ended`` is set when the output ends (the server closed it, or died)."""
    try:
        await _read_lines(stdout, sink, limit, info)
    finally:
        if ended is not None:
            ended.set()


async def _read_lines(
    stdout: anyio.abc.ByteReceiveStream,
    sink: MemoryObjectSendStream[object],
    limit: int,
    info: ServerProcess,
) -> None:
    buffer = bytearray()
    skipping = False
    head = b""
    tail = bytearray()
    skipped = 0
    async with sink:
        while True:
            try:
                chunk = await stdout.receive(_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            while chunk:
                newline = chunk.find(b"\n")
                piece, chunk = (
                    (chunk, b"") if newline < 0 else (chunk[:newline], chunk[newline + 1 :])
                )
                if skipping:
                    skipped += len(piece)
                    tail = (tail + piece)[-_EDGE:]
                elif len(buffer) + len(piece) > limit:
                    skipping, skipped = True, len(buffer) + len(piece)
                    head = bytes((buffer + piece)[:_EDGE])
                    tail = (buffer + piece)[-_EDGE:]
                    buffer = bytearray()
                else:
                    buffer += piece
                if newline < 0:
                    continue
                if skipping:
                    info.dropped += 1
                    item = _oversized_error(head, bytes(tail), skipped, limit)
                    skipping, head, tail = False, b"", bytearray()
                else:
                    line = buffer.decode("utf-8", errors="replace").strip()
                    buffer = bytearray()
                    if not line:
                        continue
                    item = _parse_line(line)
                try:
                    await sink.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return


async def _keep_stderr(stderr: anyio.abc.ByteReceiveStream, info: ServerProcess) -> None:
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
        while True:
            info.stderr_tail += await stderr.receive(_CHUNK)
            del info.stderr_tail[:-STDERR_KEPT]


async def _write_messages(
    source: MemoryObjectReceiveStream[object], stdin: anyio.abc.ByteSendStream
) -> None:
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async with source:
            async for message in source:
                data = message.message.model_dump_json(  # type: ignore[attr-defined]
                    by_alias=True, exclude_unset=True
                )
                await stdin.send((data + "\n").encode("utf-8"))


def kill_group(pid: int, sig: signal.Signals) -> None:
    """Signal the server's whole process group (it leads its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, give the server a moment, then end its whole group."""
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    with anyio.move_on_after(EXIT_GRACE):
        while process.returncode is None:
            await anyio.sleep(0.02)
    kill_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE):
        while process.returncode is None:
            await anyio.sleep(0.02)
    kill_group(process.pid, signal.SIGKILL)
    with anyio.move_on_after(KILL_GRACE):
        while process.returncode is None:
            await anyio.sleep(0.02)


@asynccontextmanager
async def bounded_stdio_client(
    command: str,
    args: list[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    info: ServerProcess,
    max_message: int = DEFAULT_MAX_MESSAGE,
    ended: anyio.Event | None = None,
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[object], MemoryObjectSendStream[object]]]:
    """Run the server and yield the (read, write) streams ``ClientSession`` takes."""
    process = await anyio.open_process(
        [command, *args],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    info.pid = process.pid
    assert process.stdout is not None and process.stdin is not None
    assert process.stderr is not None
    read_sink, read_stream = anyio.create_memory_object_stream[object](0)
    write_stream, write_source = anyio.create_memory_object_stream[object](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read_messages, process.stdout, read_sink, max_message, info, ended)
            group.start_soon(_keep_stderr, process.stderr, info)
            group.start_soon(_write_messages, write_source, process.stdin)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    write_stream.close()
                    read_stream.close()
                    await _stop(process)
                group.cancel_scope.cancel()
    finally:
        # Reached on any way out, a cancelled start included: nothing of it may live on.
        if process.returncode is None:
            kill_group(process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await process.aclose()
        info.exited = process.returncode is not None
