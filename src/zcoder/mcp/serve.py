"""``zcoder mcp serve``: the relay offered to other agents, as an MCP server over stdio.

Claude Code, Codex or opencode starts it as one of their MCP servers and gets the task
board's four tools (zcoder.mcp.serve_board) and three of the relay:
``list_agents`` (the live zcoder instances on this machine), ``send_agent_message`` (hand
one of them a task) and ``wait_for_receipt`` (how that task ended, with a deadline). None
of those agents can reach another agent's queue by itself; this is the one door, and it is
no wider than ``zcoder send``: a short-lived, non-interactive relay peer that every receiver
labels ``via MCP from <client>`` and holds to all of its own policies (zcoder.mcp.serve_relay
does the relay's side).

Who authorised a send: the calling agent asks its user before it runs a tool that is not
read-only (``send_agent_message`` is marked neither read-only nor harmless, so it is asked
for unless the user allowed it), and that approval is the user's decision to send, as
running ``zcoder send`` is; this server asks nothing more. The receiver decides the rest:
run, hold for its user, or refuse.

The client's name (``clientInfo`` of the MCP handshake, or of the request's envelope) is
hostile text: it is made a bounded label that cannot pose as a peer or carry a terminal
escape (zcoder.relay.via) before it leaves this process. When the client goes away (its
standard input closes, or SIGTERM, SIGHUP or SIGINT), waits end and the relay registration
is removed whole: manifest, socket, lock, spool and listener process. (A ``kill -9`` leaves
the files to the next zcoder's sweep, and the listener ends by itself, as for any peer.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from math import isfinite
from pathlib import Path
from typing import Annotated, Any, Final

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from zcoder import __version__
from zcoder.mcp.serve_board import INSTRUCTIONS as BOARD_INSTRUCTIONS
from zcoder.mcp.serve_board import McpBoard, add_board_tools
from zcoder.mcp.serve_relay import (
    GatewayError,
    RelayGateway,
    failed_text,
    progress_text,
    receipt_text,
    sent_text,
)
from zcoder.relay import client_label
from zcoder.sessions import default_home

DEFAULT_WAIT_SECONDS: Final = 30.0
# A wait is one tool call: the calling agent's own deadline on a call (Codex's
# tool_timeout_sec, 60 s by default) must not be what ends it. Longer: call again.
MAX_WAIT_SECONDS: Final = 300.0

INSTRUCTIONS: Final = """\
zcoder relay: hand a task to another zcoder agent running on this machine. Call
list_agents, then send_agent_message with an exact target from it, then wait_for_receipt
with the returned message_id to learn how the task ended. Send only when the user asked
for it. The receiver decides: it may queue, hold for its user, or refuse the message, and
it labels it "via MCP from <this client>"."""

LIST_DESCRIPTION: Final = (
    "List the live zcoder instances on this machine: name, project, pid, state, exact "
    "instance id, workspace, profile and model (self-reported by each instance)."
)
SEND_DESCRIPTION: Final = (
    "Send one task to one live zcoder instance, which runs it as a relayed turn under its "
    "own user's policies. Call it only when the user explicitly asked to hand work to "
    "another zcoder agent. Send the smallest self-contained task with the facts it needs; "
    "no secrets, no unrelated history. 'Accepted' means queued, not done: use "
    "wait_for_receipt with the returned message_id."
)
WAIT_DESCRIPTION: Final = (
    "Wait (up to timeout_seconds, at most 300; 0 only looks) for the receipt of a message "
    "send_agent_message sent: its outcome (completed, failed, cancelled, refused, "
    "discarded) and the receiver's short summary, which is self-reported. Without one by "
    "the deadline it says so; call it again to keep waiting."
)


class Waker:
    """Wakes the waits on the server's loop when a receipt arrives (on a relay thread)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event = asyncio.Event()

    def current(self) -> asyncio.Event:
        """The event the next wake sets (take it before looking, so no wake is missed)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._event

    def wake(self) -> None:
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                loop.call_soon_threadsafe(self._fire)

    def _fire(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()


def _client_name(ctx: Context[Any, Any]) -> str | None:
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return info.name if info is not None else None


def build_server(gateway: RelayGateway, board: McpBoard | None = None) -> MCPServer[Any]:
    instructions = INSTRUCTIONS if board is None else f"{INSTRUCTIONS}\n{BOARD_INSTRUCTIONS}"
    server: MCPServer[Any] = MCPServer(
        "zcoder-relay", version=__version__, instructions=instructions, log_level="WARNING"
    )
    if board is not None:
        add_board_tools(server, board)
    waker = Waker()
    gateway.on_receipt = waker.wake

    @server.tool(
        name="list_agents",
        description=LIST_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def list_agents() -> str:
        try:
            return await anyio.to_thread.run_sync(gateway.list_text)
        except GatewayError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(
        name="send_agent_message",
        description=SEND_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False),
    )
    async def send_agent_message(
        target: Annotated[
            str, Field(description="a name unique among the live instances, name#pid, or id")
        ],
        message: Annotated[str, Field(description="the task, as literal text")],
        ctx: Context[Any, Any],
    ) -> str:
        label = client_label(_client_name(ctx))
        waker.current()  # bind the loop before a receipt can arrive
        try:
            sent = await anyio.to_thread.run_sync(gateway.send, target, message, label)
        except GatewayError as exc:
            raise ToolError(str(exc)) from None
        if not sent.accepted:  # the receiver refused it, or it never got there
            raise ToolError(failed_text(sent))
        return sent_text(sent)

    @server.tool(
        name="wait_for_receipt",
        description=WAIT_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def wait_for_receipt(
        message_id: Annotated[str, Field(description="what send_agent_message returned")],
        timeout_seconds: Annotated[
            float, Field(description="how long to wait, 0 to 300 seconds")
        ] = DEFAULT_WAIT_SECONDS,
    ) -> str:
        if not isfinite(timeout_seconds) or timeout_seconds < 0:
            raise ToolError("timeout_seconds must be a number from 0 to 300")
        wait = min(timeout_seconds, MAX_WAIT_SECONDS)
        deadline = anyio.current_time() + wait
        while True:
            woken = waker.current()
            try:
                sent = gateway.sent_message(message_id)
            except GatewayError as exc:
                raise ToolError(str(exc)) from None
            text = receipt_text(sent)
            if text is not None:
                return text
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                return (
                    f"No receipt for {message_id} yet after {wait:g} s: {progress_text(sent)}. "
                    "Call wait_for_receipt again to keep waiting."
                )
            with anyio.move_on_after(remaining):
                await woken.wait()

    return server


def _client_went_away(exc: BaseException) -> bool:
    """Whether ``exc`` is only the client's end of the pipe closing."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_client_went_away(inner) for inner in exc.exceptions)
    return isinstance(exc, BrokenPipeError | ConnectionResetError)


def _stopper(gateway: RelayGateway) -> Callable[[int, object], None]:
    """SIGTERM, SIGHUP, SIGINT: unregister and exit at once. Unwinding the loop instead would wait
    for the SDK's reader of standard input, a thread blocked until the client writes or
    closes its end, which a client that is shutting us down may never do."""

    def stop(signum: int, _frame: object) -> None:
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(number, signal.SIG_IGN)
        gateway.close()
        _detach_stdout()
        os._exit(128 + signum)

    return stop


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="zcoder mcp serve",
        description="An MCP server over stdio that lets another agent (Claude Code, Codex, "
        "opencode) list the live zcoder instances, send one a task and read its receipt. "
        "See docs/relay.md.",
    )
    parser.parse_args(list(argv))
    gateway = RelayGateway(os.environ, Path.cwd().resolve())
    board = McpBoard(default_home(os.environ), Path.cwd().resolve())
    server = build_server(gateway, board)
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, _stopper(gateway))
    try:
        anyio.run(server.run_stdio_async)
    except BaseException as exc:
        if not _client_went_away(exc):
            raise
    finally:
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(number, signal.SIG_IGN)  # cleanup is not to be cut short
        gateway.close()
        board.close()
        _detach_stdout()
    return 0


def _detach_stdout() -> None:
    """Point standard output at /dev/null: a client that went away must not make the
    interpreter's last flush report a broken pipe."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
