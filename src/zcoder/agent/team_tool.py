"""spawn_agent: the model starts a worker zcoder in its own worktree and tmux window.

Offered on demand, and only where a spawn can happen (inside tmux, with the relay up) and
never in a relayed turn (a peer's task cannot start workers here). It takes the path
``/spawn`` takes (zcoder.team; the TUI's TeamUI): every spawn is confirmed by the user in
a dialog, which neither ``--yes`` nor an earlier ``a`` answers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final, Protocol

from zcoder.base.sanitize import field_for_model
from zcoder.team.spawn import SpawnOutcome
from zcoder.team.window import in_tmux
from zcoder.tools import ToolContext, ToolRegistry, ToolResult, ToolSpec, TurnOrigin
from zcoder.tools.base import Offered, arguments
from zcoder.tools.modes import Effects

SPAWN_AGENT: Final = "spawn_agent"
SPAWN_DESCRIPTION: Final = (
    "Start a worker agent in a git worktree. ONLY when the user asked for a worker: "
    "name is one word (letters, digits, _ . -); task is what it should do. The user "
    "confirms each spawn; its receipt comes back when it is done."
)


class Spawner(Protocol):
    """What starts a worker for the model: the front end's spawn, with its dialog."""

    async def spawn(self, name: str, task: str, *, by_model: bool = False) -> SpawnOutcome: ...


def register_spawn_tool(
    registry: ToolRegistry, spawner: Spawner, relay_available: Callable[[], bool]
) -> None:
    def available(origin: TurnOrigin, _ctx: ToolContext) -> bool:
        return not origin.relayed and relay_available() and in_tmux(os.environ)

    async def spawn_agent(args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        name = str(args.get("name", "")).strip()
        task = str(args.get("task", ""))
        outcome = await spawner.spawn(name, task, by_model=True)
        return ToolResult(outcome.started, field_for_model(outcome.text), {"worker": name})

    registry.register(
        ToolSpec(
            SPAWN_AGENT,
            SPAWN_DESCRIPTION,
            arguments({"name": {"type": "string"}, "task": {"type": "string"}}, ["name", "task"]),
            spawn_agent,
            available,
            Offered.ON_DEMAND,
            Effects.WRITES,
        )
    )
