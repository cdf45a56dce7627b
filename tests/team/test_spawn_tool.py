"""spawn_agent: offered (on demand) only inside tmux with the relay up and never in a
relayed turn; a call goes to the front end's spawn, marked as the model's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zcoder.agent import SPAWN_AGENT, register_spawn_tool
from zcoder.team.spawn import SpawnOutcome
from zcoder.tools import (
    ApprovalPolicy,
    CommandPolicy,
    Profile,
    ToolContext,
    ToolRegistry,
    TurnOrigin,
)
from zcoder.tools.base import Offered
from zcoder.tools.modes import Effects


class Spawner:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str, bool]] = []

    async def spawn(self, name: str, task: str, *, by_model: bool = False) -> SpawnOutcome:
        self.asked.append((name, task, by_model))
        return SpawnOutcome(False, f"The user did not start the worker {name}.")


def ctx(tmp_path: Path, origin: TurnOrigin) -> ToolContext:
    return ToolContext(
        workspace=tmp_path,
        profile=Profile.CODING,
        origin=origin,
        approval=ApprovalPolicy(CommandPolicy.ASK, Profile.CODING),
        approver=None,  # type: ignore[arg-type]  # never asked: the spawner confirms
        extras={},
    )


def offered(registry: ToolRegistry, context: ToolContext) -> bool:
    tools = registry.available(context)
    catalog = [t for t in tools if t.name == "load_tools"]
    return bool(catalog) and SPAWN_AGENT in catalog[0].description


@pytest.fixture
def registry() -> tuple[ToolRegistry, Spawner]:
    tools = ToolRegistry()
    spawner = Spawner()
    register_spawn_tool(tools, spawner, lambda: True)
    return tools, spawner


def test_it_is_on_demand_and_a_write(registry: tuple[ToolRegistry, Spawner]) -> None:
    spec = registry[0].get(SPAWN_AGENT)
    assert spec is not None
    assert spec.offered is Offered.ON_DEMAND and spec.effects is Effects.WRITES
    assert len(spec.description.split(".")[0]) < 45


@pytest.mark.parametrize("origin", [TurnOrigin.RELAY, TurnOrigin.STEERED])
def test_a_relayed_turn_is_never_offered_it_even_in_tmux(
    registry: tuple[ToolRegistry, Spawner],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    origin: TurnOrigin,
) -> None:
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    tools, _ = registry
    assert offered(tools, ctx(tmp_path, TurnOrigin.USER))
    assert not offered(tools, ctx(tmp_path, origin))


def test_outside_tmux_it_is_not_offered(
    registry: tuple[ToolRegistry, Spawner], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    assert not offered(registry[0], ctx(tmp_path, TurnOrigin.USER))


async def test_a_call_is_the_front_ends_spawn_marked_as_the_models(
    registry: tuple[ToolRegistry, Spawner], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    tools, spawner = registry
    args: dict[str, Any] = {"name": "w1", "task": "do it"}
    result = await tools.dispatch(SPAWN_AGENT, args, ctx(tmp_path, TurnOrigin.USER))
    assert spawner.asked == [("w1", "do it", True)]
    assert not result.ok and "did not start" in result.output
