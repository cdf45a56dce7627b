"""``delegate_task``: the model hands a task to another coding agent installed here.

Registered only when at least one helper's program is on PATH (and the user has not
turned helpers off, ZCODER_HELPERS), and then on demand: a machine without them pays
nothing for it. Its ``agent`` is one of those found. Every call asks the user
(zcoder.tools.helpers.run: no ``--yes``, ``a`` or hook answers it); it writes, so plan
mode neither offers nor runs it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from typing import Any, Final

from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.change import FileChange
from zcoder.tools.helpers.clis import find_helper, installed
from zcoder.tools.helpers.run import authorize_helper, run_helper
from zcoder.tools.modes import Effects
from zcoder.tools.registry import ToolRegistry

__all__ = ["DELEGATE_TASK", "HelperTool", "register_helper_tool"]

DELEGATE_TASK: Final = "delegate_task"
DESCRIPTION: Final = (
    "Hand a task to another coding agent. Only when the user asked for it; they approve "
    "each run. Returns its answer; its edits join /diff and /undo."
)


class HelperTool:
    """delegate_task over the helpers found on PATH, each run bounded by ``timeout``."""

    def __init__(self, names: Sequence[str], timeout: float) -> None:
        self.names = tuple(names)
        self.timeout = timeout

    def spec(self) -> ToolSpec:
        """Offered on demand; it writes (a helper changes files), so plan mode hides it."""
        agent = {"type": "string", "enum": list(self.names)}
        task = {"type": "string", "description": "self-contained instructions"}
        params = arguments({"agent": agent, "task": task}, ["agent", "task"])
        on_demand, writes = Offered.ON_DEMAND, Effects.WRITES
        run, about = self.run, DESCRIPTION
        return ToolSpec(DELEGATE_TASK, about, params, run, offered=on_demand, effects=writes)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name, task = str(args.get("agent", "")), str(args.get("task", "")).strip()
        if name not in self.names:
            return ToolResult.error(f"agent must be one of: {', '.join(self.names)}")
        if not task or "\x00" in task:
            return ToolResult.error("task is empty" if not task else "task contains a NUL byte")
        helper = find_helper(name)
        if shutil.which(name) is None:
            return ToolResult.error(f"{helper.title} ({name}) is no longer on PATH")
        why = await authorize_helper(helper, task, ctx, self.timeout)
        if why is not None:
            return ToolResult.error(why, agent=name, refused=True)
        gate = ctx.edits

        def record(changes: Sequence[FileChange]) -> None:
            if gate is not None:
                gate.record_writes(DELEGATE_TASK, changes)

        outcome = await run_helper(helper, task, ctx, self.timeout, record)
        return ToolResult(
            outcome.ok,
            outcome.text(self.timeout, ctx.max_output),
            {
                "agent": name,
                "exit_code": outcome.exit_code,
                "timed_out": outcome.timed_out,
                "changed": ", ".join(outcome.changed),
            },
        )


def register_helper_tool(
    registry: ToolRegistry, enabled: Iterable[str], timeout: float
) -> HelperTool | None:
    """Offer delegate_task (on demand) when a helper of ``enabled`` is installed."""
    found = installed(enabled)
    if not found:
        return None
    tool = HelperTool(list(found), timeout)
    registry.register(tool.spec())
    return tool
