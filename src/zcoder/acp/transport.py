"""ACP's stdio framing (one JSON-RPC message a line) that answers a bad line and serves on.

The SDK's own stdio reader logs a line it cannot parse and drops it, so a client that
sent a malformed request would wait forever for its answer; and any ``print`` or child
process writing to standard output would corrupt the stream. Here:

* the protocol gets private duplicates of descriptors 0 and 1 (``take_stdio``), and 0 and
  1 themselves are pointed at /dev/null and standard error: nothing else zcoder runs can
  read the client's messages or write into its stream;
* a line that is not JSON gets a JSON-RPC "Parse error" (-32700), a message that is not a
  JSON-RPC request, notification or response gets "Invalid request" (-32600), each with
  the request's id when it can be read (else null, as JSON-RPC says);
* a line longer than ``MAX_MESSAGE_BYTES`` is skipped to its end without being held
  in memory, and answered "Invalid request" with the id found near its start;

and the next line is read as if nothing happened. On the way out, a diff of a new file
gets the ``"oldText": null`` the SDK's serializer leaves out; on the way in, the client's
``initialize`` is read for what the SDK does not keep (zcoder.acp.notices). The SDK's
``Connection`` takes this as its message transport (acp._transport.Transport); methods it
does not know it answers "Method not found" itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
from dataclasses import dataclass
from typing import Any, Final

from zcoder.acp.notices import ClientOffers

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES: Final = 8 * 1024 * 1024
"""The longest message taken: a prompt with a large file attached fits many times over."""
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
_ID_NEAR_START: Final = 4096
_ID_PATTERN: Final = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


@dataclass(frozen=True)
class Stdio:
    """The protocol's own descriptors (see ``take_stdio``)."""

    read_fd: int
    write_fd: int


def take_stdio() -> Stdio:
    """Keep descriptors 0 and 1 for the protocol alone; point 0 at /dev/null and 1 at
    standard error, so that a stray print or a child process cannot touch the stream."""
    read_fd, write_fd = os.dup(0), os.dup(1)  # not inherited by children (PEP 446)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
    finally:
        os.close(devnull)
    os.dup2(2, 1)
    return Stdio(read_fd, write_fd)


async def open_stdio(stdio: Stdio, limit: int = MAX_MESSAGE_BYTES) -> StdioTransport:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(stdio.read_fd, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(stdio.write_fd, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return StdioTransport(reader, writer)


def _request_id(value: Any) -> Any:
    """``value`` when JSON-RPC allows it as an id (string, number, null), else None."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return value


def problem_with(message: Any) -> str | None:
    """Why ``message`` is not a JSON-RPC 2.0 request, notification or response; None if
    it is one."""
    if not isinstance(message, dict):
        return "a message must be a JSON object (batches are not used by ACP)"
    if message.get("jsonrpc") != "2.0":
        return 'a message must have "jsonrpc": "2.0"'
    if "id" in message and message["id"] is not None and _request_id(message["id"]) is None:
        return "the id must be a string or a number"
    if "method" in message:
        if not isinstance(message["method"], str) or not message["method"]:
            return "the method must be a non-empty string"
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return "params must be an object or an array"
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return "a message must have a method (a request) or a result or error (a response)"


_DIFF_CARRIERS: Final = {"session/update": "update", "session/request_permission": "toolCall"}


def _new_files_diffed_from_null(message: dict[str, Any]) -> None:
    """A diff of a new file says ``"oldText": null``: the SDK leaves out every null
    member, and clients (toad) show no diff for a diff without ``oldText``."""
    carrier = _DIFF_CARRIERS.get(message.get("method", ""))
    params = message.get("params")
    if carrier is None or not isinstance(params, dict):
        return
    call = params.get(carrier)
    content = call.get("content") if isinstance(call, dict) else None
    for item in content if isinstance(content, list) else ():
        if isinstance(item, dict) and item.get("type") == "diff" and "oldText" not in item:
            item["oldText"] = None


class StdioTransport:
    """Newline-delimited JSON-RPC over the protocol's descriptors; see the module."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._write_lock = asyncio.Lock()
        self._closed = False
        # What the client's initialize offers that the SDK does not keep (acp/notices.py).
        self.offers = ClientOffers()

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("the ACP connection is closed")
        _new_files_diffed_from_null(message)
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        async with self._write_lock:
            self._writer.write(data.encode("utf-8"))
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next well-formed message; None at the end of the input."""
        while True:
            line, oversized = await self._read_line()
            if line is None:
                return None
            if oversized:
                found = _ID_PATTERN.search(line)
                request_id = json.loads(found.group(1)) if found else None
                await self._error(
                    request_id,
                    INVALID_REQUEST,
                    f"message too large: more than {MAX_MESSAGE_BYTES} bytes",
                )
                continue
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:  # UnicodeDecodeError is one too
                await self._error(None, PARSE_ERROR, f"Parse error: {exc}")
                continue
            problem = problem_with(message)
            if problem is not None:
                request_id = _request_id(message.get("id")) if isinstance(message, dict) else None
                await self._error(request_id, INVALID_REQUEST, f"Invalid request: {problem}")
                continue
            self.offers.note(message)
            return dict(message)

    async def _read_line(self) -> tuple[bytes | None, bool]:
        """(line, oversized); an oversized line is read to its end, keeping its start."""
        try:
            return await self._reader.readuntil(b"\n"), False
        except asyncio.IncompleteReadError as exc:  # the input ended
            return (exc.partial or None), False
        except asyncio.LimitOverrunError as exc:
            start = await self._reader.readexactly(exc.consumed)
        start = start[:_ID_NEAR_START]
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return start, True
            except asyncio.IncompleteReadError:
                return start, True
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)

    async def _error(self, request_id: Any, code: int, message: str) -> None:
        log.info("bad ACP message answered %d: %s", code, message)
        try:
            await self.send(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
            )
        except (ConnectionError, OSError) as exc:
            log.debug("could not answer a bad message: %s", exc)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            self._writer.close()
