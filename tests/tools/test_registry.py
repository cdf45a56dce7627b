"""The registry: per-turn availability, argument validation, errors as results."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from zcoder.tools import (
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    TurnOrigin,
    default_registry,
)
from zcoder.tools.registry import ArgumentError, validate_arguments


async def echo(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(True, repr(sorted(args.items())))


USER_ONLY = ToolSpec(
    name="user_only",
    description="only for local user turns",
    parameters={
        "type": "object",
        "properties": {"n": {"type": "integer", "default": 3}, "flag": {"type": "boolean"}},
        "required": [],
        "additionalProperties": False,
    },
    handler=echo,
    availability=lambda origin, ctx: origin is TurnOrigin.USER,
)


def registry_with_dummy() -> ToolRegistry:
    registry = default_registry()
    registry.register(USER_ONLY)
    return registry


def names(schemas: list[dict[str, Any]]) -> list[str]:
    return [schema["function"]["name"] for schema in schemas]


def test_default_registry_has_the_builtin_tools(ctx: ToolContext) -> None:
    # read_file_range and apply_patch are offered on demand: the catalog lists them.
    assert names(default_registry().schemas(ctx)) == [
        "list_files", "read_file", "write_file", "replace_text",
        "search", "run_command", "finish", "load_tools",
    ]  # fmt: skip
    assert default_registry().names() == [
        "list_files", "read_file", "read_file_range", "write_file", "replace_text",
        "apply_patch", "search", "run_command", "finish", "job_output", "stop_job", "update_plan",
    ]  # fmt: skip


def test_schemas_are_ollama_tool_entries(ctx: ToolContext) -> None:
    for schema in default_registry().schemas(ctx):
        assert schema["type"] == "function"
        function = schema["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert function["parameters"]["type"] == "object"
        parameters = function["parameters"]
        assert set(parameters.get("required", [])) <= set(parameters["properties"])
        # Bounds the registry checks itself are not sent: they cost tokens every request.
        text = json.dumps(parameters)
        assert "additionalProperties" not in text and "minimum" not in text


async def test_bounds_left_out_of_the_schema_are_still_enforced(ctx: ToolContext) -> None:
    result = await default_registry().dispatch(
        "list_files", {"path": ".", "max_entries": 0, "extra": 1}, ctx
    )
    assert not result.ok


def test_origin_decides_which_tools_are_offered(make_ctx) -> None:
    registry = registry_with_dummy()
    assert "user_only" in names(registry.schemas(make_ctx(origin=TurnOrigin.USER)))
    assert "user_only" not in names(registry.schemas(make_ctx(origin=TurnOrigin.RELAY)))


async def test_tool_not_offered_is_refused_at_dispatch(make_ctx) -> None:
    result = await registry_with_dummy().dispatch(
        "user_only", {}, make_ctx(origin=TurnOrigin.RELAY)
    )
    assert not result.ok and "not available in this turn" in result.output
    assert result.metadata["error_kind"] == "unavailable"


async def test_dispatch_fills_defaults_and_coerces(ctx: ToolContext) -> None:
    registry = registry_with_dummy()
    assert (await registry.dispatch("user_only", {}, ctx)).output == "[('n', 3)]"
    coerced = await registry.dispatch("user_only", {"n": "7", "flag": "true"}, ctx)
    assert coerced.output == "[('flag', True), ('n', 7)]"
    from_json = await registry.dispatch("user_only", '{"n": 2}', ctx)
    assert from_json.output == "[('n', 2)]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"n": "seven"}, "'n' must be integer, got string"),
        ({"n": True}, "'n' must be integer, got boolean"),
        ({"n": 1.5}, "'n' must be integer"),
        ({"zzz": 1}, "unknown argument zzz;"),
        ({"zzz": 1, "yyy": 2}, "unknown arguments yyy, zzz;"),
        ([1, 2], "must be a JSON object"),
        ("{not json", "not valid JSON"),
    ],
)
async def test_invalid_arguments_are_error_results(
    ctx: ToolContext, args: Any, message: str
) -> None:
    result = await registry_with_dummy().dispatch("user_only", args, ctx)
    assert not result.ok and message in result.output
    assert result.metadata["error_kind"] == "invalid_arguments"


async def test_missing_required_argument(ctx: ToolContext) -> None:
    result = await default_registry().dispatch("read_file", {}, ctx)
    assert not result.ok and "missing required argument: path" in result.output


async def test_unknown_tool_lists_the_available_ones(ctx: ToolContext) -> None:
    result = await default_registry().dispatch("rm_everything", {}, ctx)
    assert not result.ok and "no tool named 'rm_everything'" in result.output
    assert "read_file" in result.output


async def test_handler_exceptions_become_results(ctx: ToolContext) -> None:
    async def boom(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("kaput")

    registry = ToolRegistry()
    registry.register(ToolSpec("boom", "explodes", {"type": "object", "properties": {}}, boom))
    result = await registry.dispatch("boom", {}, ctx)
    assert not result.ok and "RuntimeError: kaput" in result.output
    assert "Traceback" not in result.output


async def test_cancellation_propagates(ctx: ToolContext) -> None:
    async def slow(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(60)
        return ToolResult(True, "")

    registry = ToolRegistry()
    registry.register(ToolSpec("slow", "sleeps", {"type": "object", "properties": {}}, slow))
    task = asyncio.create_task(registry.dispatch("slow", {}, ctx))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_outputs_are_bounded_by_the_context(make_ctx) -> None:
    async def flood(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(True, "a" * 100_000 + "END")

    registry = ToolRegistry()
    registry.register(ToolSpec("flood", "floods", {"type": "object", "properties": {}}, flood))
    result = await registry.dispatch("flood", {}, make_ctx(max_output=2048))
    assert len(result.output.encode()) <= 2048
    assert result.output.endswith("END") and "bytes omitted" in result.output


def test_duplicate_registration_is_an_error() -> None:
    registry = default_registry()
    with pytest.raises(ValueError, match="already registered"):
        registry.register(USER_ONLY)
        registry.register(USER_ONLY)


async def test_finish_validates_and_marks_the_result(ctx: ToolContext) -> None:
    registry = default_registry()
    result = await registry.dispatch("finish", {"status": "blocked", "response": "need a key"}, ctx)
    assert result.ok
    assert result.metadata == {
        "finish": True, "status": "blocked", "response": "need a key", "tool": "finish",
    }  # fmt: skip
    bad = await registry.dispatch("finish", {"status": "done", "response": "x"}, ctx)
    assert not bad.ok and '"complete", "blocked"' in bad.output
    missing = await registry.dispatch("finish", {"status": "complete"}, ctx)
    assert not missing.ok and "response" in missing.output


def test_validate_arguments_minimum_and_maximum() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1,
              "maximum": 5}}}  # fmt: skip
    assert validate_arguments({"n": 5}, schema) == {"n": 5}
    for bad in (0, 6):
        with pytest.raises(ArgumentError):
            validate_arguments({"n": bad}, schema)


def test_context_max_output_defaults_from_environment(
    monkeypatch: pytest.MonkeyPatch, ctx: ToolContext
) -> None:
    monkeypatch.setenv("ZCODER_MAX_TOOL_OUTPUT", "50000")
    fresh = ToolContext(ctx.workspace, ctx.profile, ctx.origin, ctx.approval, ctx.approver)
    assert fresh.max_output == 50000
    monkeypatch.delenv("ZCODER_MAX_TOOL_OUTPUT")
    fresh = ToolContext(ctx.workspace, ctx.profile, ctx.origin, ctx.approval, ctx.approver)
    assert fresh.max_output == 32768


@pytest.mark.parametrize("text", ["+-5", "²", "5-", "--1"])
async def test_integer_text_a_model_may_send_never_escapes_as_an_exception(
    ctx: ToolContext, text: str
) -> None:
    result = await default_registry().dispatch(
        "list_files", {"path": ".", "max_entries": text}, ctx
    )
    assert not result.ok and "max_entries" in result.output
