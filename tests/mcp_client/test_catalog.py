"""Small windows: the MCP servers' tools offered on demand, each server an entry of the
catalog tool load_tools, instead of every schema, and a tools list that only grows at its
end (zcoder.mcp.catalog, zcoder.mcp.tools, zcoder.tools.catalog).

The order and the switch are tested against a stand-in manager (which tools are ready
when is what the test sets); the whole path, against server-everything in real turns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from tests.agent.support import MODEL
from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import Turn, call
from tests.mcp_client.support import everything, needs_everything, write_servers
from tests.mcp_client.turns import World, tool_names, tool_results
from tests.tools.test_registry_sources import context
from zcoder.agent import Agent, Outcome
from zcoder.mcp.catalog import schema_tokens
from zcoder.mcp.connection import McpTool
from zcoder.mcp.manager import McpManager
from zcoder.mcp.tools import McpToolSource
from zcoder.options import McpLimits
from zcoder.tools import ToolRegistry, ToolSpec
from zcoder.tools.catalog import LOAD_TOOL


def tool(server: str, name: str, words: int = 5) -> McpTool:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return McpTool(server, name, "does things " * words, schema, read_only=True)


@dataclass
class StandInManager:
    """What McpToolSource reads of a manager: the ready tools and each server's line."""

    ready: list[McpTool] = field(default_factory=list)
    limits: McpLimits = field(default_factory=McpLimits)

    def tools(self) -> list[McpTool]:
        return list(self.ready)

    def summary(self, server: str) -> str:
        return f"the {server} server"


def source(manager: StandInManager, window: int | None) -> McpToolSource:
    return McpToolSource(cast(McpManager, manager), lambda: window)


@dataclass
class Offer:
    """A registry holding only the MCP tools, and the tools it offers a user turn."""

    registry: ToolRegistry
    tmp_path: Path

    def specs(self) -> list[ToolSpec]:
        return self.registry.available(context(self.tmp_path))


def offer(manager: StandInManager, window: int | None, tmp_path: Path) -> Offer:
    registry = ToolRegistry()
    registry.add_source(source(manager, window))
    return Offer(registry, tmp_path)


def names(offered: Offer) -> list[str]:
    return [spec.name for spec in offered.specs()]


def test_the_share_comes_from_the_environment_within_bounds() -> None:
    assert McpLimits.from_env({}).tools_share == 0.10
    assert McpLimits.from_env({"ZCODER_MCP_TOOLS_SHARE": "0.25"}).tools_share == 0.25
    for bad in ("0", "-1", "2", "lots"):
        assert McpLimits.from_env({"ZCODER_MCP_TOOLS_SHARE": bad}).tools_share == 0.10


def test_a_server_ready_later_adds_its_tools_at_the_end(tmp_path: Path) -> None:
    manager = StandInManager([tool("b", "one")])
    offered = offer(manager, None, tmp_path)  # no window known: every tool
    assert names(offered) == ["mcp__b__one"]
    # "a" comes first in the configuration, but was ready later: after what was offered.
    manager.ready = [tool("a", "x"), tool("a", "y"), tool("b", "one")]
    assert names(offered) == ["mcp__b__one", "mcp__a__x", "mcp__a__y"]
    manager.ready = [tool("a", "x"), tool("a", "y")]  # b died: its tools leave
    assert names(offered) == ["mcp__a__x", "mcp__a__y"]


async def test_under_a_small_window_the_catalog_replaces_the_schemas_until_loaded(
    tmp_path: Path,
) -> None:
    manager = StandInManager([tool("a", "x", 50), tool("a", "y", 50), tool("b", "one", 50)])
    every = schema_tokens(source(manager, None).specs())
    offered = offer(manager, every * 10 - 1, tmp_path)  # 10 %: just past the share
    assert source(manager, every * 10 - 1).specs() == []  # the catalog lists them instead
    assert names(offered) == [LOAD_TOOL]
    (load,) = offered.specs()
    assert load.description.splitlines()[1:] == [
        "- a: the a server — tools: x, y",
        "- b: the b server — tools: one",
    ]
    assert load.parameters["required"] == ["name"]
    described = load.description
    registry, ctx = offered.registry, context(tmp_path)

    result = await registry.dispatch(LOAD_TOOL, {"name": "b"}, ctx)
    assert result.ok and "mcp__b__one" in result.output
    assert names(offered) == [LOAD_TOOL, "mcp__b__one"]
    await registry.dispatch(LOAD_TOOL, {"name": "a"}, ctx)
    assert names(offered) == [LOAD_TOOL, "mcp__b__one", "mcp__a__x", "mcp__a__y"]
    assert offered.specs()[0].description == described  # the catalog did not change
    again = await registry.dispatch(LOAD_TOOL, {"name": "a"}, ctx)
    assert again.ok and "loaded already" in again.output
    unknown = await registry.dispatch(LOAD_TOOL, {"name": "c"}, ctx)
    assert not unknown.ok and "loadable: a, b" in unknown.output

    assert names(offer(manager, every * 10, tmp_path)) == ["mcp__a__x", "mcp__a__y", "mcp__b__one"]


def everything_agent(world: World, window: int) -> Agent:
    """An agent whose user mcp.json has server-everything, on a window of ``window``."""
    write_servers(world.home / "mcp.json", {"every": everything()})
    return world.agent(ScriptedApprover(), num_ctx=window)[0]


@needs_everything
async def test_a_small_window_loads_server_everything_on_demand_in_real_turns(world: World) -> None:
    agent = everything_agent(world, 8192)
    world.fake.enqueue(
        Turn.tool_calls(call(LOAD_TOOL, {"name": "every"})),
        Turn.tool_calls(call("mcp__every__echo", {"message": "loaded"})),
        Turn.text("done"),
    )
    finished = await agent.run_user_turn("echo something")
    assert finished.outcome is Outcome.COMPLETE, finished.error
    first, second, third = world.fake.chat_bodies
    assert LOAD_TOOL in tool_names(first)
    assert not [name for name in tool_names(first) if name.startswith("mcp")]
    catalog = next(t for t in first["tools"] if t["function"]["name"] == LOAD_TOOL)
    lines = catalog["function"]["description"].splitlines()
    line = next(line for line in lines if line.startswith("- every:"))
    assert line.startswith("- every: Everything Server – Server Instructions — tools: echo, ")
    # The next request is the first one's tools and, at the end, every's.
    assert second["tools"][: len(first["tools"])] == first["tools"]
    added = tool_names(second)[len(first["tools"]) :]
    assert len(added) == 13 and "mcp__every__echo" in added
    assert tool_results(third)[-1] == "Echo: loaded"
    assert third["tools"] == second["tools"]


@needs_everything
async def test_a_large_window_gets_every_schema_and_no_catalog(world: World) -> None:
    agent = everything_agent(world, 131072)
    world.fake.enqueue(Turn.text("hello"))
    await agent.run_user_turn("hi")
    (body,) = world.fake.chat_bodies
    offered = tool_names(body)
    catalog = next(t for t in body["tools"] if t["function"]["name"] == LOAD_TOOL)
    assert "- every:" not in catalog["function"]["description"]  # only built-ins on demand
    assert "mcp__every__echo" in offered
    assert body["model"] == MODEL
    assert json.dumps(body["tools"]).count("mcp__every__") == 13
