"""The MCP servers of one zcoder process: which may start, starting them, calls, shutdown.

The servers run on an event loop of their own, on a thread of their own. The agent's loop
is the TUI's: a server that floods it (a 100 MB reply is parsed somewhere) or a transport
that blocks a moment would freeze the screen. Here the UI only ever awaits a future, with a
deadline, and cancelling that await cancels the call on the servers' loop.

A server starts when first needed (the first turn that could use its tools), in the
background: a turn waits for starting servers only up to ``turn_wait`` seconds, then goes on
with the tools that are ready; the others join later turns' tool lists when they are up. A
start has a deadline, and so has each call. Whatever fails is kept as the server's state
and reason, which the turn reports once and ``zcoder mcp list`` shows.

``/mcp`` (tui/parts/mcp_ui.py) may stop one server and start it again (``reconnect``), and turn
one off in this workspace (``set_enabled``, kept in zcoder.mcp.switches): a server turned
off is never started and its tools leave the list.

The configuration is read again when its files change (``reload_if_changed``, at the start
of each turn and by ``/mcp``; ``reload`` on ``/mcp reload``): a server added elsewhere
(``zcoder mcp add`` in another terminal) joins, one removed is stopped, one whose entry
changed is stopped and starts again with its new entry (a project one only after the user's
consent to the new entry). ``extra`` servers (an editor's, acp/mcp_servers.py) stay.

``close`` (also run at exit) asks every connection to stop its server (stdin closed, then
the process group ended) and then kills, without waiting, any group still there: no server
outlives zcoder.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import signal
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zcoder.base.plural import counted
from zcoder.mcp.config import McpConfig, ServerEntry, config_stamp, load_mcp_config
from zcoder.mcp.connection import McpCallError, McpServerConnection, McpTool, ServerState
from zcoder.mcp.consent import Consent, ConsentBook
from zcoder.mcp.switches import DisabledBook
from zcoder.mcp.transport import DEFAULT_MAX_MESSAGE
from zcoder.options import McpLimits

__all__ = ["McpManager", "ServerStatus"]

CLOSE_SECONDS = 5.0


@dataclass(frozen=True)
class ServerStatus:
    """One configured server as ``zcoder mcp list`` (and later ``/mcp``) shows it."""

    entry: ServerEntry
    consent: Consent
    state: str
    reason: str
    tools: tuple[McpTool, ...]


class McpManager:
    """Every configured server of one workspace, started on demand on a loop of its own."""

    def __init__(
        self,
        workspace: Path,
        home: Path | None,
        *,
        environ: Mapping[str, str] | None = None,
        config: McpConfig | None = None,
        limits: McpLimits | None = None,
        start_timeout: float | None = None,
        call_timeout: float | None = None,
        turn_wait: float | None = None,
        max_message: int = DEFAULT_MAX_MESSAGE,
        extra: Sequence[ServerEntry] = (),
    ) -> None:
        """``extra``: servers configured elsewhere than in the files (an editor's), which
        replace a file's server of the same name and stay through reloads. ``limits``:
        the deadlines (Config.mcp_limits; the defaults when None), which ``start_timeout``,
        ``call_timeout`` and ``turn_wait`` replace one by one."""
        self.workspace = workspace
        self.home = home
        self.extra = tuple(extra)
        self.environ: Mapping[str, str] = dict(os.environ if environ is None else environ)
        self._stamp = config_stamp(workspace, home)
        self.config = config if config is not None else self._read_config()
        self.consent = ConsentBook(home)
        self.switches = DisabledBook(home)
        self.limits = limits if limits is not None else McpLimits()
        self.start_timeout = start_timeout or self.limits.start_timeout
        self.call_timeout = call_timeout or self.limits.call_timeout
        self.turn_wait = turn_wait or self.limits.turn_wait
        self.max_message = max_message
        self._connections: dict[str, McpServerConnection] = {}
        self._runs: dict[str, concurrent.futures.Future[None]] = {}
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._reported: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def configured(self) -> bool:
        return bool(self.config.servers)

    # -- the configuration, read again when its files change ------------------------------

    def _read_config(self) -> McpConfig:
        config = load_mcp_config(self.workspace, self.home)
        config.servers.update((entry.name, entry) for entry in self.extra)
        return config

    async def reload_if_changed(self) -> list[str]:
        """``reload`` when either file changed since it was last read; else nothing."""
        if config_stamp(self.workspace, self.home) == self._stamp:
            return []
        return await self.reload()

    async def reload(self) -> list[str]:
        """Read the files again: removed servers stop, changed ones stop (and start again
        with their new entry once they may), added ones join. What changed, one line each.
        """
        self._stamp = config_stamp(self.workspace, self.home)
        old, new = self.config.servers, self._read_config()
        said: list[tuple[str, str]] = []  # (server, what happened)
        again: list[ServerEntry] = []
        for name, entry in old.items():
            now = new.servers.get(name)
            if now is not None and now == entry and now.raw == entry.raw:
                continue
            running = name in self._connections
            await self.stop(name)
            if now is None:
                said.append(
                    (name, "is no longer configured" + ("; it was stopped" if running else ""))
                )
            else:
                said.append((name, f"changed in {now.source}"))
                again += [now] if running else []
        self.config = new
        said += [
            (name, f"was added ({entry.scope}, {entry.source})")
            for name, entry in new.servers.items()
            if name not in old
        ]
        ready = {entry.name for entry in self.startable()}
        restart = [entry for entry in again if entry.name in ready]
        if restart:
            self.start(restart)
        return [
            f"MCP server {name!r} {what}: {self._next_step(name, ready)}" for name, what in said
        ]

    def _next_step(self, name: str, ready: set[str]) -> str:
        """What happens next to ``name``, after a reload, in the words of a notice."""
        entry = self.config.servers.get(name)
        if entry is None:
            return "its tools are no longer offered"
        if name in self._connections:
            return "starting again with its new entry"
        if name in ready:
            return "it starts at your next prompt"
        (status,) = [s for s in self.statuses() if s.entry.name == name]
        return f"{status.state} ({status.reason})" if status.reason else status.state

    # -- the servers' own loop ------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise McpCallError("the MCP servers were shut down")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="zcoder-mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
                atexit.register(self.close)
            return self._loop

    async def _on_loop(self, coroutine: Any, timeout: float | None = None) -> Any:
        """Run ``coroutine`` on the servers' loop and await it from the caller's loop."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._ensure_loop())
        self._pending.add(future)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._closed and future.cancelled() and not (task and task.cancelling()):
                # close() gave up on it: the caller is told, not cancelled.
                raise McpCallError("the MCP servers were shut down") from None
            raise
        finally:
            self._pending.discard(future)
            future.cancel()  # a no-op once done; cancels the call when the caller gave up

    # -- which servers, and their state ---------------------------------------------------

    def consent_for(self, entry: ServerEntry) -> Consent:
        return self.consent.status(self.workspace, entry)

    def startable(self) -> list[ServerEntry]:
        """Servers that may run now: the user's own, and project ones the user allowed,
        unless turned off in this workspace."""
        off = self.switches.disabled(self.workspace)
        return [
            entry
            for entry in self.config.servers.values()
            if entry.name not in off
            and self.consent_for(entry) in (Consent.NOT_NEEDED, Consent.GRANTED)
        ]

    def statuses(self) -> list[ServerStatus]:
        out = []
        off = self.switches.disabled(self.workspace)
        for name, entry in self.config.servers.items():
            consent = self.consent_for(entry)
            connection = self._connections.get(name)
            tools: tuple[McpTool, ...]
            if name in off and connection is None:
                state, tools = "disabled", ()
                reason = "turned off in this workspace (/mcp enable turns it on)"
            elif connection is not None:
                state, reason = connection.state.value, connection.reason
                tools = tuple(connection.tools) if connection.state is ServerState.READY else ()
            elif consent is Consent.REFUSED:
                state, reason, tools = "refused", "the user refused this project server", ()
            elif consent is Consent.UNASKED:
                state, tools = "needs consent", ()
                reason = (
                    f"a project server ({entry.source}): the user has not allowed it yet "
                    "(asked at the next prompt)"
                )
            else:
                state, reason, tools = ServerState.IDLE.value, "", ()
            out.append(ServerStatus(entry, consent, state, reason, tools))
        return out

    def tools(self) -> list[McpTool]:
        """The tools of every ready server, in configuration order."""
        found: list[McpTool] = []
        for connection in list(self._connections.values()):
            if connection.state is ServerState.READY:
                found.extend(connection.tools)
        return found

    def tool(self, server: str, name: str) -> McpTool | None:
        connection = self._connections.get(server)
        if connection is None or connection.state is not ServerState.READY:
            return None
        return next((tool for tool in connection.tools if tool.name == name), None)

    # -- starting -------------------------------------------------------------------------

    def start(self, entries: Iterable[ServerEntry]) -> None:
        """Start each server not started yet, in the background."""
        loop = self._ensure_loop()
        for entry in entries:
            with self._lock:
                if entry.name in self._connections:
                    continue
                connection = McpServerConnection(
                    entry,
                    environ=self.environ,
                    workspace=self.workspace,
                    start_timeout=self.start_timeout,
                    max_message=self.max_message,
                )
                self._connections[entry.name] = connection
                self._runs[entry.name] = asyncio.run_coroutine_threadsafe(connection.run(), loop)

    async def wait_started(self, timeout: float, names: Iterable[str] | None = None) -> None:
        """Wait until every started server (of ``names``, if given) is ready or failed,
        or ``timeout`` passed."""
        connections = [
            connection
            for name, connection in list(self._connections.items())
            if names is None or name in names
        ]
        if not connections:
            return

        async def all_ready() -> None:
            for connection in connections:
                await connection.wait_ready()

        with contextlib.suppress(TimeoutError):
            await self._on_loop(all_ready(), timeout)

    def news(self, names: Iterable[str] | None = None) -> list[str]:
        """What the user was not told yet (of the servers ``names``, if given): servers
        that are ready, failed or still starting."""
        lines = []
        for name, connection in list(self._connections.items()):
            if names is not None and name not in names:
                continue
            if connection.state is ServerState.FAILED:
                key, line = (
                    (name, "failed:" + connection.reason),
                    (f"MCP server {name!r} failed: {connection.reason}"),
                )
            elif connection.state is ServerState.STARTING:
                key, line = (
                    (name, "starting"),
                    (f"MCP server {name!r} is still starting; its tools join when it is ready"),
                )
            elif connection.state is ServerState.READY:
                key = (name, "ready")
                count = len(connection.tools)
                line = f"MCP server {name!r} is ready: {counted(count, 'tool')}"
                if connection.skipped:
                    line += "; left out, their names being unusable as tool names: " + ", ".join(
                        repr(name) for name in connection.skipped
                    )
            else:
                continue
            if key not in self._reported:
                self._reported.add(key)
                lines.append(line)
        return lines

    def summary(self, server: str) -> str:
        """The server's one line about itself ("" before it is ready)."""
        connection = self._connections.get(server)
        return connection.summary if connection is not None else ""

    # -- one server, on the user's request (/mcp) -------------------------------------------

    async def stop(self, name: str) -> None:
        """Stop one server (its tools leave the list); a later start begins afresh."""
        with self._lock:
            connection = self._connections.pop(name, None)
            run = self._runs.pop(name, None)
        self._reported = {key for key in self._reported if key[0] != name}
        if connection is None or run is None:
            return

        async def stopped() -> None:
            connection.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.wrap_future(run), CLOSE_SECONDS)
            if connection.process.pid and not connection.process.exited:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(connection.process.pid, signal.SIGKILL)

        with contextlib.suppress(TimeoutError):
            await self._on_loop(stopped(), CLOSE_SECONDS + 1)

    async def reconnect(self, name: str) -> str | None:
        """Stop ``name`` if it runs and start it again, waiting for it up to the start's
        deadline; None when it may start, else why it may not."""
        entry = self.config.servers[name]
        await self.stop(name)
        if entry not in self.startable():
            (status,) = [s for s in self.statuses() if s.entry.name == name]
            return f"{status.state}: {status.reason}" if status.reason else status.state
        self.start([entry])
        await self.wait_started(self.start_timeout + 1, names=[name])
        self.news([name])  # the caller shows the outcome: the next turn does not say it again
        return None

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """Turn ``name`` on or off in this workspace, for this and later sessions; off
        stops it now. McpConfigError when the choice cannot be kept."""
        self.switches.set(self.workspace, name, enabled=enabled)
        if not enabled:
            await self.stop(name)

    # -- calls ----------------------------------------------------------------------------

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        """The server's CallToolResult; McpCallError says why there is none."""
        connection = self._connections.get(server)
        if connection is None:
            raise McpCallError(f"the MCP server {server!r} is not running")
        try:
            # The deadline is the connection's; the one here only guards a lost loop.
            return await self._on_loop(
                connection.call(tool, arguments, self.call_timeout), self.call_timeout + 5
            )
        except TimeoutError:
            raise McpCallError(
                f"the MCP server {server!r} did not answer within {self.call_timeout:g} s"
            ) from None

    # -- shutdown -------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every server and the loop; safe to call twice, from any thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        for connection in self._connections.values():
            loop.call_soon_threadsafe(connection.close)
        concurrent.futures.wait(self._runs.values(), timeout=CLOSE_SECONDS)
        for connection in self._connections.values():
            if connection.process.pid and not connection.process.exited:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(connection.process.pid, signal.SIGKILL)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=CLOSE_SECONDS)
        for future in list(self._pending):  # nothing answers them now: never leave one hanging
            future.cancel()
        with contextlib.suppress(RuntimeError):
            if not loop.is_running():
                loop.close()
        atexit.unregister(self.close)
