"""The model's tools on the board: task_list, task_add, task_claim, task_update.

Offered on demand as one group, ``tasks``: one short line in the catalog (the prompt's
budget), the four schemas only once the model loads the group or calls one of them.
task_list changes nothing (plan mode keeps it); the others write. Claims the model makes
are held by this zcoder process (zcoder.board.service) and end with it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from zcoder.board.records import BoardError, TaskRefused
from zcoder.board.service import (
    ABOUT_ADD,
    ABOUT_CLAIM,
    ABOUT_LIST,
    ABOUT_UPDATE,
    BoardService,
)
from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.catalog import Shelf
from zcoder.tools.modes import Effects
from zcoder.tools.offload import to_completion

GROUP: Final = "tasks"
ABOUT: Final = "shared task board"

_ID: Final = {"type": "integer", "description": "task id, as listed"}


async def _run(call: Callable[[], str], name: str, _args: Any, ctx: ToolContext) -> ToolResult:
    try:
        return ToolResult(True, await to_completion(ctx.stop, call, name=name))
    except (TaskRefused, BoardError) as exc:
        return ToolResult.error(str(exc))


def _tool(
    name: str,
    description: str,
    parameters: dict[str, Any],
    answer: Callable[[dict[str, Any]], str],
    effects: Effects = Effects.WRITES,
) -> ToolSpec:
    async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await _run(functools.partial(answer, args), name, args, ctx)

    return ToolSpec(
        name, description, parameters, handler, offered=Offered.ON_DEMAND, effects=effects
    )


def board_tools(service: BoardService) -> tuple[ToolSpec, ...]:
    return (
        _tool(
            "task_list",
            ABOUT_LIST,
            arguments({"id": _ID}),
            lambda args: service.list_text(args.get("id")),
            Effects.READS,
        ),
        _tool(
            "task_add",
            ABOUT_ADD,
            arguments(
                {
                    "title": {"type": "string"},
                    "description": {"type": "string", "default": ""},
                    "after": {"type": "array", "items": {"type": "integer"}, "default": []},
                },
                ["title"],
            ),
            lambda args: service.add_text(args["title"], args["description"], args["after"]),
        ),
        _tool(
            "task_claim",
            ABOUT_CLAIM,
            arguments({"id": _ID}),
            lambda args: service.claim_text(args.get("id")),
        ),
        _tool(
            "task_update",
            ABOUT_UPDATE,
            arguments(
                {
                    "id": _ID,
                    "state": {"type": "string", "enum": ["done", "failed", "open"]},
                    "note": {"type": "string", "default": ""},
                },
                ["id"],
            ),
            lambda args: service.update_text(args["id"], args.get("state"), args["note"]),
        ),
    )


class BoardTools:
    """The four tools as a source of the registry: one catalog entry for all of them."""

    def __init__(self, service: BoardService) -> None:
        self.service = service
        self._shelf = Shelf(GROUP, ABOUT, board_tools(service), names_shown=False)

    def specs(self) -> Sequence[ToolSpec]:
        return ()

    def shelves(self) -> Sequence[Shelf]:
        return (self._shelf,)

    async def prepare(self, ctx: ToolContext) -> list[str]:
        return []
