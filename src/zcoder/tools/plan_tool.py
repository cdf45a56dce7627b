"""update_plan: the model keeps its plan (tools/plan.py), which the user sees live.

The plan belongs to the conversation, not to the turn: the agent puts its keeper in
every turn's context (``ctx.extras[PLAN_KEY]``), which saves it with the session and tells
the front end. Offered on demand (tools/catalog.py): a line in the catalog costs a few
tokens of every request where the schema would cost many, and a call by its name loads it.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.modes import Effects
from zcoder.tools.plan import MAX_PLAN_ITEMS, UPDATE_PLAN_TOOL, Plan, PlanError, PlanStatus

__all__ = ["PLAN_KEY", "UPDATE_PLAN", "UPDATE_PLAN_TOOL", "PlanHolder"]

PLAN_KEY: Final = "plan"
"""Where a turn's context carries the conversation's PlanHolder (ToolContext.extras)."""


class PlanHolder(Protocol):
    """Who keeps the conversation's plan (zcoder.agent.plan_keeper.PlanKeeper)."""

    def replace(self, plan: Plan) -> None: ...


async def _update_plan(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    holder = ctx.extras.get(PLAN_KEY)
    if holder is None:
        return ToolResult.error("there is no plan to keep in this conversation")
    try:
        plan = Plan.from_arguments(args["items"])
    except PlanError as exc:
        return ToolResult.error(f"{exc}. The plan was not changed.")
    holder.replace(plan)
    return ToolResult(True, plan.for_model(), {"plan": plan.to_list()})


UPDATE_PLAN = ToolSpec(
    name=UPDATE_PLAN_TOOL,
    description=(
        "Keep a step-by-step plan the user sees; send the whole list each time, "
        "one step in_progress."
    ),
    parameters=arguments(
        {
            "items": {
                "type": "array",
                "maxItems": MAX_PLAN_ITEMS,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "status": {"type": "string", "enum": [s.value for s in PlanStatus]},
                    },
                    "required": ["text", "status"],
                },
            }
        },
        required=["items"],
    ),
    handler=_update_plan,
    effects=Effects.READS,  # the plan is zcoder's to show: plan mode keeps one too
    offered=Offered.ON_DEMAND,
)
