"""One SSH connection to a remote zcoder's ACP agent, driven with the SDK's client side.

The ``ssh`` client is a subprocess: its standard input and output carry ACP's JSON-RPC
(the remote ``zcoder --acp`` reads and writes its own), its standard error is kept (the
last lines say why a connection failed: a refused key, an unknown host, a remote command
not found). The connection is gone when that process ends, whatever ended it: the network,
the remote side, the user's ``ssh`` giving up, or this program closing it. ``dropped`` is
then set, and every request still waiting for an answer is failed with ``ConnectionLost``
rather than left to hang.

What a session update or a permission request means is the caller's (``Handler``): this
module only connects, initializes, and opens the session (``session/new``, or
``session/load`` after a reconnect, which replays the saved conversation first).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeVar

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.schema import ClientCapabilities, Implementation, SessionInfo

from zcoder import __version__
from zcoder.acp.permission import PermissionAsker
from zcoder.base.errors import ZcoderError
from zcoder.base.ssh_target import Target, ssh_argv

log = logging.getLogger(__name__)

T = TypeVar("T")

STDERR_LINES: Final = 20
LOAD_RETRY_SECONDS: Final = 15.0
"""How long ``session/load`` is tried again while the remote session is still held by the
zcoder of the dropped connection (it saves the interrupted turn, then lets it go)."""
INFO_METHOD: Final = "zcoder/info"
PEERS_METHOD: Final = "zcoder/peers"
INPUT_METHOD: Final = "zcoder/input"
MOST_SESSIONS: Final = 1000  # /sessions lists at most these (session/list pages through)


class ConnectionLost(ZcoderError):
    """The SSH connection ended (``str``: what ssh said, if anything)."""


class Handler(PermissionAsker, Protocol):
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None: ...


@dataclass
class RemoteInfo:
    """What the remote zcoder says of itself (``_zcoder/info``)."""

    cwd: str
    hostname: str = ""
    profile: str = "coding"
    model: str = ""
    version: str = ""


@dataclass
class Connection:
    target: Target
    process: asyncio.subprocess.Process
    conn: ClientSideConnection
    stderr: list[str] = field(default_factory=list)
    dropped: asyncio.Event = field(default_factory=asyncio.Event)
    info: RemoteInfo | None = None
    _tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    @classmethod
    async def open(cls, target: Target, env: Mapping[str, str], handler: Handler) -> Connection:
        """Start ssh and initialize ACP over it; raises ConnectionLost when it fails."""
        argv = ssh_argv(target, env)
        log.info("connecting: %s", argv)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(env),
                start_new_session=True,  # the terminal's Ctrl+C is the TUI's, not ssh's
                limit=50 * 1024 * 1024,
            )
        except OSError as exc:
            raise ConnectionLost(f"cannot run {argv[0]}: {exc}") from None
        assert process.stdin is not None and process.stdout is not None
        conn = connect_to_agent(handler, process.stdin, process.stdout)  # type: ignore[arg-type]
        connection = cls(target, process, conn)
        connection._tasks = [
            asyncio.get_running_loop().create_task(connection._read_stderr()),
            asyncio.get_running_loop().create_task(connection._watch()),
        ]
        try:
            await connection.call(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(),
                    client_info=Implementation(
                        name="zcoder-connect", title="zcoder --connect", version=__version__
                    ),
                )
            )
            found = await connection.call(conn.ext_method(INFO_METHOD, {}))
            connection.info = RemoteInfo(
                cwd=str(found.get("cwd", "")),
                hostname=str(found.get("hostname", "")),
                profile=str(found.get("profile", "coding")),
                model=str(found.get("model", "")),
                version=str(found.get("version", "")),
            )
        except BaseException:
            await connection.close()
            raise
        return connection

    @property
    def workspace(self) -> str:
        """The remote workspace: the target's absolute path, else where the agent runs."""
        path = self.target.path
        if path is not None and path.startswith("/"):
            return path
        return self.info.cwd if self.info is not None else "/"

    def why(self) -> str:
        """What ssh said last, for the user (its exit status when it said nothing)."""
        said = "; ".join(line for line in self.stderr[-3:] if line)
        if said:
            return said
        code = self.process.returncode
        return f"ssh exited with status {code}" if code is not None else "the connection closed"

    async def call(self, request: Awaitable[T]) -> T:
        """``request``'s answer, or ConnectionLost when the connection ends first."""
        task = asyncio.ensure_future(request)
        dropped = asyncio.ensure_future(self.dropped.wait())
        try:
            await asyncio.wait({task, dropped}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            dropped.cancel()
        if not task.done():
            task.cancel()
            raise ConnectionLost(self.why())
        try:
            return task.result()
        except (ConnectionError, OSError):  # the SDK fails what waits when the stream ends
            raise ConnectionLost(self.why()) from None

    async def open_session(self, resume: str | None) -> str:
        """session/new, or session/load of ``resume`` (its history arrives as updates first)."""
        cwd = self.workspace
        if resume is None:
            opened = await self.call(self.conn.new_session(cwd=cwd, mcp_servers=[]))
            return opened.session_id
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LOAD_RETRY_SECONDS
        while True:
            try:
                await self.call(self.conn.load_session(cwd=cwd, session_id=resume, mcp_servers=[]))
                return resume
            except RequestError as exc:
                # The dropped connection's zcoder may still hold the session: it saves the
                # interrupted turn first. Anything else is final.
                if "is open in" not in str(exc.data) or loop.time() > deadline:
                    raise
            await asyncio.sleep(0.3)

    async def peers(self) -> dict[str, Any]:
        return await self.call(self.conn.ext_method(PEERS_METHOD, {}))

    async def input(self, session_id: str, action: str, **params: Any) -> dict[str, Any]:
        """``_zcoder/input`` on the session's waiting input (zcoder.acp.input)."""
        request = {"sessionId": session_id, "action": action, **params}
        return await self.call(self.conn.ext_method(INPUT_METHOD, request))

    async def sessions(self) -> list[SessionInfo]:
        """session/list of the remote workspace, every page (zcoder.acp.listing)."""
        listed: list[SessionInfo] = []
        cursor: str | None = None
        while True:
            page = await self.call(self.conn.list_sessions(cwd=self.workspace, cursor=cursor))
            listed += page.sessions
            cursor = page.next_cursor
            if not cursor or len(listed) >= MOST_SESSIONS:
                return listed

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").rstrip()
            log.info("ssh: %s", text)
            self.stderr.append(text)
            del self.stderr[:-STDERR_LINES]

    async def _watch(self) -> None:
        await self.process.wait()
        # What ssh printed last may still be in the pipe.
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._tasks[0]), 1.0)
        log.info("connection to %s ended: %s", self.target.label, self.why())
        self.dropped.set()

    def kill(self) -> None:
        """End the ssh client (and with it the remote agent, which sees its input end)."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.conn.close(), 2.0)
        if self.process.stdin is not None:
            with contextlib.suppress(Exception):
                self.process.stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self.dropped.wait()), 5.0)
        except TimeoutError:
            self.kill()
            await self.dropped.wait()
        for task in self._tasks:
            task.cancel()
