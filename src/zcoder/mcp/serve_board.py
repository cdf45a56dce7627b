"""The task board offered by ``zcoder mcp serve``: the same four tools the model has.

Claude Code, Codex or opencode take tasks from the board of the repository the server runs
in (its working directory), as zcoder's own agents do. The claims are held by this server
process (zcoder.board.service), which lives as long as the client's session: when the
client ends it, or it is killed, its tasks are free again at once. The claimant is named
after the client (``clientInfo``, made a bounded label that cannot carry an escape).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Final

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from zcoder.board import BoardError, Claimant, TaskRefused
from zcoder.board.service import (
    ABOUT_ADD,
    ABOUT_CLAIM,
    ABOUT_LIST,
    ABOUT_UPDATE,
    BoardService,
)
from zcoder.relay import client_label

INSTRUCTIONS: Final = (
    "The task board (task_list, task_add, task_claim, task_update) is shared by every "
    "agent working in this repository: claim a task before working on it, then settle it."
)

TaskId = Annotated[int | None, Field(description="a task id, as listed")]
HELD_HERE: Final = "The claim lasts while this MCP server runs."


class ClientClaimant:
    """Who claims: the MCP client, by the name its handshake gave."""

    def __init__(self) -> None:
        self.name = client_label(None)
        self.instance = f"{socket.gethostname()}:mcp:{os.getpid()}"

    def seen(self, ctx: Context[Any, Any]) -> None:
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        self.name = client_label(info.name if info is not None else None)

    def __call__(self) -> Claimant:
        return Claimant(self.name, self.instance)


async def _answer(call: Callable[[], str]) -> str:
    try:
        return await anyio.to_thread.run_sync(call)
    except (TaskRefused, BoardError) as exc:
        raise ToolError(str(exc)) from None


class McpBoard:
    """The board of the repository the server runs in, claimed for its client."""

    def __init__(self, home: Path, workspace: Path) -> None:
        self.claimant = ClientClaimant()
        self.service = BoardService(home, workspace, self.claimant)

    def close(self) -> None:
        self.service.close()


def add_board_tools(server: MCPServer[Any], board: McpBoard) -> None:
    service, claimant = board.service, board.claimant
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, open_world_hint=False)

    @server.tool(name="task_list", description=ABOUT_LIST, annotations=reads)
    async def task_list(id: TaskId = None) -> str:
        return await _answer(lambda: service.list_text(id))

    @server.tool(name="task_add", description=ABOUT_ADD, annotations=writes)
    async def task_add(
        title: str, ctx: Context[Any, Any], description: str = "", after: list[int] | None = None
    ) -> str:
        claimant.seen(ctx)
        return await _answer(lambda: service.add_text(title, description, after or []))

    @server.tool(name="task_claim", description=f"{ABOUT_CLAIM} {HELD_HERE}", annotations=writes)
    async def task_claim(ctx: Context[Any, Any], id: TaskId = None) -> str:
        claimant.seen(ctx)
        return await _answer(lambda: service.claim_text(id))

    @server.tool(name="task_update", description=ABOUT_UPDATE, annotations=writes)
    async def task_update(
        id: int, ctx: Context[Any, Any], state: str | None = None, note: str = ""
    ) -> str:
        claimant.seen(ctx)
        return await _answer(lambda: service.update_text(id, state, note))
