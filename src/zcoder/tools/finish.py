"""finish: the model's way to end a turn with a status and a final response."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from zcoder.tools.base import ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.modes import Effects

__all__ = ["FINISH", "FINISH_TOOL_NAME", "FinishStatus"]

FINISH_TOOL_NAME = "finish"


class FinishStatus(StrEnum):
    COMPLETE = "complete"
    BLOCKED = "blocked"


async def _finish(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    status = FinishStatus(args["status"])
    response: str = args["response"]
    return ToolResult(
        True,
        f"Turn finished ({status.value}).",
        {"finish": True, "status": status.value, "response": response},
    )


FINISH = ToolSpec(
    name=FINISH_TOOL_NAME,
    description=(
        "End the turn: status 'complete' when done, 'blocked' when the user is needed; "
        "response is your final message."
    ),
    parameters=arguments(
        {
            "status": {"type": "string", "enum": [s.value for s in FinishStatus]},
            "response": {"type": "string", "description": "Final message to the user"},
        },
        required=["status", "response"],
    ),
    handler=_finish,
    effects=Effects.READS,
)
