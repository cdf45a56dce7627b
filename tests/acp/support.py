"""A real ACP client for the tests: the SDK's client side driving ``zcoder --acp``.

``acp_zcoder(env, fake)`` starts ``python -m zcoder --acp`` as a subprocess with the
SDK's ``spawn_agent_process``, against the fake Ollama, with a private home (the same
environment as the ``--prompt`` tests); its standard error goes to a file the failing
test shows. ``RecordingClient`` keeps every session update, answers permission requests
as the test scripts them (an option id, "cancelled", or never), and lets a test wait for
a condition on what arrived, never for a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, cast

from acp import Client, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env

WAIT_SECONDS = 20.0
"""A bound on every wait, so that a broken build fails instead of hanging."""
NEVER = "never"
"""A permission answer: the request is left unanswered (the client hangs, or vanishes)."""


@dataclass
class Asked:
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


class RecordingClient:
    """The client's side: records updates and permission requests, answers as told."""

    def __init__(self, answer: str = "reject_once") -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.asked: list[Asked] = []
        self._changed = asyncio.Condition()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        async with self._changed:
            self.asked.append(Asked(tool_call, options))
            self._changed.notify_all()
        if self.answer == NEVER:
            await asyncio.Event().wait()
        if self.answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        async with self._changed:
            self.updates.append(update)
            self._changed.notify_all()

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        async def until() -> None:
            async with self._changed:
                await self._changed.wait_for(condition)

        await asyncio.wait_for(until(), WAIT_SECONDS)

    # -- what arrived ------------------------------------------------------------------

    def reply(self) -> str:
        return "".join(
            u.content.text
            for u in self.updates
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def of_kind(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def tool_states(self, call_id: str) -> list[str]:
        return [
            u.status
            for u in self.updates
            if isinstance(u, ToolCallStart | ToolCallProgress)
            and u.tool_call_id == call_id
            and u.status is not None
        ]

    def tool_text(self, call_id: str) -> str:
        """The text content of the call's last update that had content."""
        for update in reversed(self.updates):
            if (
                isinstance(update, ToolCallStart | ToolCallProgress)
                and update.tool_call_id == call_id
                and update.content
            ):
                return "\n".join(
                    c.content.text
                    for c in update.content
                    if c.type == "content" and isinstance(c.content, TextContentBlock)
                )
        return ""


@contextlib.asynccontextmanager
async def acp_zcoder(
    env: Env, fake: FakeOllama, client: RecordingClient, *extra: str
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """``zcoder --acp`` with the SDK's client connected (not yet initialized)."""
    log = env.home.parent / "acp-stderr.txt"
    with log.open("ab") as stderr:
        async with spawn_agent_process(
            cast(Client, client),  # the methods a test needs; the SDK routes by name
            sys.executable,
            "-m",
            "zcoder",
            "--acp",
            "--host",
            f"127.0.0.1:{fake.port}",
            *extra,
            env=env.vars,
            cwd=str(env.workspace),
            # zcoder exits by itself once its input closes; the SDK's 2 s before it sends
            # SIGTERM is too short on a loaded machine (two of these, a relay each).
            transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": WAIT_SECONDS},
        ) as (conn, process):
            yield conn, process


def stderr_of(env: Env) -> str:
    path = env.home.parent / "acp-stderr.txt"
    return path.read_text(errors="replace") if path.exists() else ""


@dataclass
class Running:
    """A session whose prompt's turn runs ``run_command`` (id c1), still running."""

    client: RecordingClient
    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    session_id: str
    turn: asyncio.Future[PromptResponse]


@contextlib.asynccontextmanager
async def command_running(
    env: Env, fake: FakeOllama, command: str, prompt: str, said: str, *after: Turn
) -> AsyncIterator[Running]:
    """The model runs ``command`` (allowed once) for ``prompt``, then plays ``after``;
    yields once the command printed ``said``, the turn still running."""
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": command}, id="c1")), *after)
    client = RecordingClient("allow_once")
    async with acp_zcoder(env, fake, client) as (conn, process):
        session_id = await new_session(conn, env)
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session_id, prompt=[text_block(prompt)])
        )
        await client.wait_for(lambda: said in client.tool_text("c1"))
        yield Running(client, conn, process, session_id, turn)


async def new_session(conn: ClientSideConnection, env: Env) -> str:
    await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
    opened = await asyncio.wait_for(conn.new_session(cwd=str(env.workspace)), WAIT_SECONDS)
    return opened.session_id
