"""One MCP server's connection: start it, list its tools, call them, and notice its end.

A connection lives in one task of the manager's event loop (zcoder.mcp.manager): the SDK's
transports and ``ClientSession`` are async context managers built on anyio task groups,
which must be left by the task that entered them. So that task enters them, initialises
the session, lists the tools, says it is ready, and then waits until it is asked to close
or the server's output ends (the server died). Calls come from other tasks of the same
loop, each under its own deadline.

Everything that goes wrong becomes a ``reason`` in words a user can act on (the command
that was not found, the server's last lines of standard error, the deadline that passed),
never a traceback.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation, PaginatedRequestParams, ToolListChangedNotification

from zcoder import __version__
from zcoder.base.errors import ZcoderError
from zcoder.mcp.config import McpConfigError, ServerEntry, expand
from zcoder.mcp.http import bounded_http_client
from zcoder.mcp.transport import DEFAULT_MAX_MESSAGE, ServerProcess, bounded_stdio_client

__all__ = ["McpCallError", "McpServerConnection", "McpTool", "ServerState"]

_INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TMPDIR")
"""What a stdio server inherits of zcoder's environment (as the SDK's default, plus the
locale and TMPDIR); the rest must be named in its entry's ``env``, so that zcoder's own
secrets (an API key) do not go to every server."""


_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ServerState(StrEnum):
    IDLE = "not started"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"


class McpCallError(ZcoderError):
    """A call that did not get a result: the message says why, for the model and user."""


@dataclass(frozen=True)
class McpTool:
    """A tool one server offers, as zcoder names and judges it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    """The server's ``readOnlyHint``: such a tool runs without asking, like read_file."""

    @property
    def qualified(self) -> str:
        return f"mcp__{self.server}__{self.name}"


def _stdio_parameters(
    entry: ServerEntry, environ: Mapping[str, str], workspace: Path
) -> tuple[str, list[str], dict[str, str], str]:
    env = {key: environ[key] for key in _INHERITED if key in environ}
    env.update({key: expand(value, environ) for key, value in entry.env})
    command = expand(entry.command, environ)
    found = shutil.which(command, path=env.get("PATH")) if os.sep not in command else command
    if found is None:
        raise McpConfigError(f"the command {command!r} was not found on PATH")
    args = [expand(arg, environ) for arg in entry.args]
    cwd = expand(entry.cwd, environ) if entry.cwd else ""
    directory = (workspace / cwd) if cwd else workspace
    return found, args, env, str(directory)


@dataclass(eq=False, repr=False)  # repr=False: environ may hold secrets
class McpServerConnection:
    """One server, from its start to its end (a connection is never started twice)."""

    entry: ServerEntry
    _: KW_ONLY
    environ: Mapping[str, str]
    workspace: Path
    start_timeout: float
    max_message: int = DEFAULT_MAX_MESSAGE
    state: ServerState = field(default=ServerState.IDLE, init=False)
    reason: str = field(default="", init=False)
    tools: list[McpTool] = field(default_factory=list, init=False)
    skipped: list[str] = field(default_factory=list, init=False)
    """Tools whose names cannot be tool names (models take [A-Za-z0-9_-], 64 at most)."""
    process: ServerProcess = field(default_factory=ServerProcess, init=False)
    _session: Any = field(default=None, init=False)
    _ready: anyio.Event | None = field(default=None, init=False)
    _close: anyio.Event | None = field(default=None, init=False)
    _tools_changed: anyio.Event = field(init=False)  # made in run(), on the manager's loop
    _scope: anyio.CancelScope = field(default_factory=anyio.CancelScope, init=False)
    changes: int = field(default=0, init=False)
    """How many times the server's tool list changed (and was listed again)."""
    summary: str = field(default="", init=False)
    """One line on what the server is, in its own words (the catalog of small windows)."""

    @property
    def name(self) -> str:
        return self.entry.name

    async def run(self) -> None:
        """The connection's own task: start, serve until asked to close, then stop."""
        self._ready, self._close = anyio.Event(), anyio.Event()
        self._tools_changed = anyio.Event()
        self.state = ServerState.STARTING
        try:
            with self._scope:  # close() cancels a start still under way
                await self._serve()
        except McpConfigError as exc:
            self._fail(str(exc))
        except TimeoutError:
            self._fail(f"it did not start within {self.start_timeout:g} s")
        except OSError as exc:
            self._fail(f"it could not be started: {exc.strerror or exc}")
        except Exception as exc:  # noqa: BLE001 - a server's failure is a state, not a crash
            self._fail(_explain(exc))
        finally:
            self._session = None
            if self.state in (ServerState.READY, ServerState.STARTING):
                self.state = ServerState.STOPPED
            self._ready.set()

    def _fail(self, reason: str) -> None:
        words = self.process.last_words()
        if words and words not in reason:
            reason = f"{reason}; its last output: {words}"
        if self.state is not ServerState.STOPPED:
            self.state, self.reason = ServerState.FAILED, reason

    async def _serve(self) -> None:
        assert self._ready is not None and self._close is not None
        ended = anyio.Event()
        # One scope around everything the start enters (the transport's and the session's
        # task groups must close inside the scope they opened in); its deadline is the
        # start's, lifted once the server is ready.
        with anyio.CancelScope(deadline=anyio.current_time() + self.start_timeout) as scope:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(ended))
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        client_info=Implementation(name="zcoder", version=__version__),
                        message_handler=self._on_message,
                    )
                )
                self.summary = _summary(await session.initialize())
                self.tools = await self._list_tools(session)
                scope.deadline = math.inf
                self._session = session
                self.state = ServerState.READY
                self._ready.set()
                async with anyio.create_task_group() as group:

                    async def closed() -> None:
                        assert self._close is not None
                        await self._close.wait()
                        group.cancel_scope.cancel()

                    async def died() -> None:
                        await ended.wait()
                        group.cancel_scope.cancel()

                    group.start_soon(closed)
                    group.start_soon(died)
                    group.start_soon(self._relist, session)
                self._session = None
                if ended.is_set() and not self._close.is_set():
                    self._fail("the server ended")
        if scope.cancelled_caught and self.state is ServerState.STARTING:
            raise TimeoutError

    async def _on_message(self, message: Any) -> None:
        """The session's notifications: a changed tool list is listed again, by its own
        task (a handler that awaited the session here would block its reading)."""
        if isinstance(message, ToolListChangedNotification):
            self._tools_changed.set()
        await anyio.lowlevel.checkpoint()

    async def _relist(self, session: Any) -> None:
        while True:
            await self._tools_changed.wait()
            self._tools_changed = anyio.Event()
            with anyio.move_on_after(self.start_timeout):
                try:
                    self.skipped = []
                    self.tools = await self._list_tools(session)
                    self.changes += 1
                except Exception:  # noqa: BLE001 - the tools listed before stay
                    continue

    def _transport(self, ended: anyio.Event) -> contextlib.AbstractAsyncContextManager[Any]:
        entry = self.entry
        if entry.transport == "http":
            headers = {key: expand(value, self.environ) for key, value in entry.headers}
            url = expand(entry.url, self.environ)

            @contextlib.asynccontextmanager
            async def http() -> Any:
                async with (
                    bounded_http_client(headers, self.max_message) as client,
                    streamable_http_client(
                        url, http_client=client, max_sse_event_size=self.max_message
                    ) as streams,
                ):
                    yield streams

            return http()
        command, args, env, cwd = _stdio_parameters(entry, self.environ, self.workspace)
        return bounded_stdio_client(
            command,
            args,
            env=env,
            cwd=cwd,
            info=self.process,
            max_message=self.max_message,
            ended=ended,
        )

    async def _list_tools(self, session: Any) -> list[McpTool]:
        tools: list[McpTool] = []
        cursor: str | None = None
        for _ in range(100):  # pages; a server that pages forever is cut off
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            listing = await session.list_tools(params=params)
            for tool in listing.tools:
                if not _TOOL_NAME.fullmatch(f"mcp__{self.name}__{tool.name}"):
                    self.skipped.append(tool.name[:80])
                    continue
                annotations = tool.annotations
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
                tools.append(
                    McpTool(
                        server=self.name,
                        name=tool.name,
                        description=(tool.description or "").strip(),
                        input_schema=schema or {"type": "object", "properties": {}},
                        read_only=bool(annotations is not None and annotations.read_only_hint),
                    )
                )
            cursor = listing.next_cursor
            if not cursor:
                break
        return tools

    async def wait_ready(self) -> None:
        """Until the start succeeded or failed (also when asked before the start began)."""
        while self._ready is None and self.state is ServerState.IDLE:
            await anyio.sleep(0.01)
        if self._ready is not None:
            await self._ready.wait()

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        """Call one tool; McpCallError says why there is no result."""
        session = self._session
        if session is None or self.state is not ServerState.READY:
            raise McpCallError(
                f"the MCP server {self.name!r} is {self.state.value}"
                + (f": {self.reason}" if self.reason else "")
            )
        try:
            with anyio.fail_after(timeout):
                return await session.call_tool(tool, arguments)
        except TimeoutError:
            raise McpCallError(
                f"the MCP server {self.name!r} did not answer within {timeout:g} s; "
                "the call was abandoned"
            ) from None
        except Exception as exc:  # noqa: BLE001 - every failure is told, never raised on
            if self.state is not ServerState.READY:
                raise McpCallError(f"the MCP server {self.name!r} failed: {self.reason}") from None
            raise McpCallError(f"the MCP server {self.name!r}: {_explain(exc)}") from None

    def close(self) -> None:
        """Ask the connection's task to stop the server (it does so in its own task); a
        start still under way is given up. Call on the connection's loop."""
        if self._close is not None:
            self._close.set()
        if self.state is ServerState.STARTING:
            self._scope.cancel()


def _summary(initialized: Any) -> str:
    """The server's one line: its description, else the first line of its instructions,
    else its title or name (a Markdown heading's marks dropped); at most 160 characters."""
    info = getattr(initialized, "server_info", None)
    candidates = (
        getattr(info, "description", None),
        getattr(initialized, "instructions", None),
        getattr(info, "title", None),
        getattr(info, "name", None),
    )
    for text in candidates:
        lines = (ln.strip().lstrip("#").strip() for ln in (text or "").splitlines())
        line = next((ln for ln in lines if ln), "")
        if line:
            return line if len(line) <= 160 else line[:159] + "…"
    return ""


def _explain(exc: BaseException) -> str:
    """An exception (an anyio group of them included) as one line a user can read."""
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        if inner:
            return _explain(inner[0])
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, TimeoutError):
        return "it timed out"
    return text if len(text) < 500 else text[:500] + "…"
