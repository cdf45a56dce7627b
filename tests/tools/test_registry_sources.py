"""Tool sources: tools that join the registry while the program runs (MCP servers')."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.fixtures.workspace import tool_context
from zcoder.tools import CommandPolicy, ToolContext, ToolResult, ToolSpec, default_registry
from zcoder.tools.catalog import Shelf


class Source:
    def __init__(self) -> None:
        self.tools: list[ToolSpec] = []
        self.prepared = 0

    def specs(self) -> Sequence[ToolSpec]:
        return self.tools

    def shelves(self) -> Sequence[Shelf]:
        return []

    async def prepare(self, ctx: ToolContext) -> list[str]:
        self.prepared += 1
        self.tools = [ToolSpec("extra__echo", "Echo.", ECHO_SCHEMA, echo)]
        return ["extra tools are ready"]


ECHO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


async def echo(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(True, "x" * 10_000 + args["text"])


def context(tmp_path: Path) -> ToolContext:
    return tool_context(tmp_path, policy=CommandPolicy.ASK, max_output=2048)


async def test_a_sources_tools_come_after_the_built_in_ones_once_prepared(tmp_path: Path) -> None:
    registry = default_registry()
    builtin = registry.names()
    source = Source()
    registry.add_source(source)
    ctx = context(tmp_path)
    assert registry.names() == builtin  # nothing until the source has tools
    assert await registry.prepare(ctx) == ["extra tools are ready"]
    assert registry.names() == [*builtin, "extra__echo"]
    # After the built-in ones offered always, before the catalog (in a first offer).
    assert [schema["function"]["name"] for schema in registry.schemas(ctx)][-2:] == [
        "extra__echo",
        "load_tools",
    ]
    assert registry.get("extra__echo") is source.tools[0]


async def test_a_sources_tool_is_dispatched_validated_and_bounded(tmp_path: Path) -> None:
    registry = default_registry()
    registry.add_source(Source())
    ctx = context(tmp_path)
    await registry.prepare(ctx)
    missing = await registry.dispatch("extra__echo", {}, ctx)
    assert not missing.ok and "missing required argument: text" in missing.output
    result = await registry.dispatch("extra__echo", {"text": "END"}, ctx)
    assert result.ok and result.output.endswith("END")
    assert len(result.output.encode()) <= 2048 and "bytes omitted" in result.output


async def test_without_sources_prepare_says_nothing(tmp_path: Path) -> None:
    assert await default_registry().prepare(context(tmp_path)) == []
