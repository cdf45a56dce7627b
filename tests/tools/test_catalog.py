"""When tools are offered (ToolSpec.offered), and the one catalog of the tools offered on
demand: listed by load_tools, loaded when the model asks, at the end of the list
(zcoder.tools.catalog, zcoder.tools.registry)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.workspace import tool_context
from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec
from zcoder.tools.catalog import LOAD_TOOL, Shelf, asked_in, first_sentence
from zcoder.tools.defaults import BUILTIN_TOOLS, default_registry
from zcoder.tools.profiles import TurnOrigin
from zcoder.tools.registry import ToolRegistry

ALWAYS = ["list_files", "read_file", "write_file", "replace_text", "search", "run_command"]


async def echo(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(True, f"echo {args.get('text', '')}")


TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}


def tool(name: str, offered: Offered = Offered.ON_DEMAND, **kwargs: Any) -> ToolSpec:
    return ToolSpec(name, f"The {name} tool. More words.", TEXT, echo, offered=offered, **kwargs)


def offered(registry: ToolRegistry, ctx: ToolContext) -> list[str]:
    return [schema["function"]["name"] for schema in registry.schemas(ctx)]


def catalog_lines(registry: ToolRegistry, ctx: ToolContext) -> list[str]:
    load = next(s for s in registry.schemas(ctx) if s["function"]["name"] == LOAD_TOOL)
    lines: list[str] = load["function"]["description"].splitlines()
    return lines[1:]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return tool_context(tmp_path)


def test_each_built_in_tool_declares_when_it_is_offered() -> None:
    declared = {spec.name: spec.offered for spec in BUILTIN_TOOLS}
    # What a model needs every turn (read, edit, list, search, run) is always offered.
    assert all(declared[name] is Offered.ALWAYS for name in [*ALWAYS, "finish"])
    on_demand = [name for name, when in declared.items() if when is Offered.ON_DEMAND]
    assert on_demand == ["read_file_range", "apply_patch", "job_output", "stop_job", "update_plan"]


def test_a_tool_offered_while_a_feature_is_on_must_name_the_switch() -> None:
    with pytest.raises(ValueError, match="while a feature is on"):
        tool("relayish", Offered.WHILE_ON)
    switched = tool("relayish", Offered.WHILE_ON, availability=lambda _o, _c: False)
    assert switched.offered is Offered.WHILE_ON


def test_the_catalog_lists_the_tools_offered_on_demand_in_place_of_their_schemas(
    ctx: ToolContext,
) -> None:
    registry = default_registry()
    assert offered(registry, ctx) == [*ALWAYS, "finish", LOAD_TOOL]
    assert catalog_lines(registry, ctx) == [
        "- read_file_range: Read numbered lines of a file of any size",
        "- apply_patch: Apply a unified diff",
        "- job_output: New output of a background job",
        "- stop_job: Stop a background job",
        "- update_plan: Keep a step-by-step plan the user sees",
    ]
    assert "read_file_range" in registry.names()  # known, dispatchable, not sent


async def test_a_loaded_tool_joins_the_end_and_the_list_before_it_stays_as_it_was(
    ctx: ToolContext,
) -> None:
    registry = default_registry()
    before = registry.schemas(ctx)
    result = await registry.dispatch(LOAD_TOOL, {"name": "apply_patch"}, ctx)
    assert result.ok
    assert result.output == "Loaded 1 tool (apply_patch); call it from your next step: apply_patch"
    after = registry.schemas(ctx)
    assert json.dumps(after[: len(before)]) == json.dumps(before)  # a prefix, unchanged
    assert [s["function"]["name"] for s in after[len(before) :]] == ["apply_patch"]
    await registry.dispatch(LOAD_TOOL, {"name": "read_file_range"}, ctx)
    assert offered(registry, ctx)[-2:] == ["apply_patch", "read_file_range"]
    again = await registry.dispatch(LOAD_TOOL, {"name": "apply_patch"}, ctx)
    assert again.ok and "loaded already" in again.output
    assert offered(registry, ctx).count("apply_patch") == 1


async def test_a_name_the_catalog_does_not_list_is_refused_with_what_it_lists(
    ctx: ToolContext,
) -> None:
    registry = default_registry()
    for name in ("run_command", "nonsense", ""):
        result = await registry.dispatch(LOAD_TOOL, {"name": name}, ctx)
        assert not result.ok
        assert "loadable: read_file_range, apply_patch" in result.output
    missing = await registry.dispatch(LOAD_TOOL, {}, ctx)
    assert not missing.ok and "missing required argument: name" in missing.output
    assert offered(registry, ctx)[-1] == LOAD_TOOL  # nothing was loaded


async def test_a_call_to_a_listed_tool_runs_it_and_loads_it(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(tool("always", Offered.ALWAYS))
    registry.register(tool("rare"))
    assert offered(registry, ctx) == ["always", LOAD_TOOL]
    result = await registry.dispatch("rare", {"text": "hi"}, ctx)
    assert result.ok and result.output == "echo hi"
    assert offered(registry, ctx) == ["always", LOAD_TOOL, "rare"]


async def test_an_on_demand_tool_off_in_this_turn_is_neither_listed_nor_run(
    tmp_path: Path,
) -> None:
    registry = ToolRegistry()
    registry.register(tool("local", availability=lambda origin, _c: origin is TurnOrigin.USER))
    registry.register(tool("anywhere"))
    relayed = tool_context(tmp_path, origin=TurnOrigin.RELAY)
    assert catalog_lines(registry, relayed) == ["- anywhere: The anywhere tool"]
    refused = await registry.dispatch("local", {}, relayed)
    assert not refused.ok and refused.metadata["error_kind"] == "unavailable"
    load = await registry.dispatch(LOAD_TOOL, {"name": "local"}, relayed)
    assert not load.ok and "loadable: anywhere" in load.output
    assert offered(registry, relayed) == [LOAD_TOOL]
    assert offered(registry, tool_context(tmp_path)) == [LOAD_TOOL]  # nothing loaded


async def test_no_tool_on_demand_no_catalog(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(tool("always", Offered.ALWAYS))
    assert offered(registry, ctx) == ["always"]
    result = await registry.dispatch(LOAD_TOOL, {"name": "always"}, ctx)
    assert not result.ok and result.metadata["error_kind"] == "unknown_tool"


class Source:
    """A source (an MCP server's, an extension's) with one group offered on demand."""

    def __init__(self) -> None:
        self.ready: list[ToolSpec] = []
        self.grouped: list[ToolSpec] = []

    def specs(self) -> Sequence[ToolSpec]:
        return self.ready

    def shelves(self) -> Sequence[Shelf]:
        if not self.grouped:
            return []
        return [Shelf("srv", "a server", tuple(self.grouped), ("x", "y"))]

    async def prepare(self, ctx: ToolContext) -> list[str]:
        return []


async def test_a_sources_group_is_one_entry_and_loads_whole(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(tool("rare"))
    source = Source()
    registry.add_source(source)
    source.grouped = [tool("srv__x", Offered.ALWAYS), tool("srv__y", Offered.ALWAYS)]
    assert catalog_lines(registry, ctx) == [
        "- rare: The rare tool",
        "- srv: a server — tools: x, y",
    ]
    await registry.dispatch(LOAD_TOOL, {"name": "srv"}, ctx)
    await registry.dispatch(LOAD_TOOL, {"name": "rare"}, ctx)
    assert offered(registry, ctx) == [LOAD_TOOL, "srv__x", "srv__y", "rare"]


async def test_a_tool_offered_later_joins_the_end(ctx: ToolContext) -> None:
    switch = {"on": False}
    registry = ToolRegistry()
    registry.register(tool("first", Offered.ALWAYS))
    registry.register(tool("relay", Offered.WHILE_ON, availability=lambda _o, _c: switch["on"]))
    registry.register(tool("rare"))
    source = Source()
    registry.add_source(source)
    assert offered(registry, ctx) == ["first", LOAD_TOOL]
    await registry.dispatch(LOAD_TOOL, {"name": "rare"}, ctx)
    assert offered(registry, ctx) == ["first", LOAD_TOOL, "rare"]
    switch["on"] = True  # the feature came on: after everything offered before
    source.ready = [tool("late", Offered.ALWAYS)]  # a server came up
    assert offered(registry, ctx) == ["first", LOAD_TOOL, "rare", "relay", "late"]
    switch["on"] = False
    assert offered(registry, ctx) == ["first", LOAD_TOOL, "rare", "late"]
    switch["on"] = True  # back in its place
    assert offered(registry, ctx) == ["first", LOAD_TOOL, "rare", "relay", "late"]


def call(name: str, arguments: Any) -> dict[str, Any]:
    return {"function": {"name": name, "arguments": arguments}}


def test_what_a_history_loaded_is_read_back_from_it() -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [call(LOAD_TOOL, {"name": "apply_patch"})]},
        {"role": "tool", "content": "Loaded"},
        {"role": "assistant", "tool_calls": [call("read_file_range", '{"path": "a"}')]},
        {"role": "assistant", "tool_calls": [call(LOAD_TOOL, '{"name": "srv"}')]},
        {"role": "assistant", "tool_calls": [call(LOAD_TOOL, "not json"), {"bad": 1}, "x"]},
        {"role": "assistant", "tool_calls": [call(LOAD_TOOL, {"name": 3})]},
    ]
    assert asked_in(history) == ["apply_patch", "read_file_range", "srv"]


async def test_a_resumed_history_offers_what_it_loaded_and_a_new_one_nothing(
    ctx: ToolContext,
) -> None:
    registry = default_registry()
    await registry.dispatch(LOAD_TOOL, {"name": "read_file_range"}, ctx)
    assert offered(registry, ctx)[-1] == "read_file_range"
    registry.use_history([{"role": "user", "content": "a new session"}])
    assert offered(registry, ctx)[-1] == LOAD_TOOL
    registry.use_history(
        [{"role": "assistant", "tool_calls": [call(LOAD_TOOL, {"name": "apply_patch"})]}]
    )
    assert offered(registry, ctx)[-2:] == [LOAD_TOOL, "apply_patch"]


def test_a_catalog_line_is_the_first_sentence_outside_brackets() -> None:
    assert first_sentence("Do it. Then more.") == "Do it"
    assert first_sentence("Apply (a; b) now; then") == "Apply (a; b) now"
    assert first_sentence("v1.2 is kept") == "v1.2 is kept"
    long = first_sentence("word " * 40)
    assert long.endswith("word…") and len(long) <= 60
