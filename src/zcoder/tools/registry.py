"""The tool registry: which tools a turn is offered, and safe dispatch of model calls.

A tool is offered always, on demand (listed by the catalog tool and loaded when the model
asks: zcoder.tools.catalog) or while a feature is on (ToolSpec.offered); a request's tools
list begins with the previous request's."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from zcoder.base.errors import ZcoderError
from zcoder.base.plural import plural
from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec
from zcoder.tools.catalog import LOAD_TOOL, Catalog, OfferOrder, Shelf, asked_in
from zcoder.tools.modes import Effects, Mode
from zcoder.tools.output import bound_text

__all__ = ["ALIASES_KEY", "ArgumentError", "ToolRegistry", "ToolSource", "validate_arguments"]

ALIASES_KEY = "x-aliases"
"""An object schema's other names for its arguments (``{"target": "target_instance_id"}``):
a call may use either name. Validated here; the model is never sent it
(zcoder.tools.base)."""

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


# What a model may send as text for an integer: ASCII digits with one optional sign
# (str.isdigit also accepts "²" and other digits that int() refuses).
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


class ArgumentError(ZcoderError, ValueError):
    """Arguments that do not match a tool's schema; the message is for the model."""


def _coerce(name: str, value: Any, schema: dict[str, Any]) -> Any:
    """Check one argument against its schema, accepting the usual model slips.

    Models sometimes send ``"10"`` for 10 or ``"true"`` for true; those are converted.
    Anything else of the wrong type is an error.
    """
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
            value = int(value.strip())
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
    elif kind == "number":
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = float(value)
    elif kind == "boolean" and isinstance(value, str) and value.lower() in ("true", "false"):
        value = value.lower() == "true"
    if isinstance(kind, str) and kind in _JSON_TYPES:
        expected = _JSON_TYPES[kind]
        # bool is an int in Python, never in JSON.
        if not isinstance(value, expected) or (
            isinstance(value, bool) and kind in ("integer", "number")
        ):
            raise ArgumentError(f"argument {name!r} must be {kind}, got {_json_type(value)}")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(json.dumps(choice) for choice in schema["enum"])
        raise ArgumentError(f"argument {name!r} must be one of {choices}, got {value!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ArgumentError(f"argument {name!r} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ArgumentError(f"argument {name!r} must be at most {schema['maximum']}")
    return value


def _json_type(value: Any) -> str:
    for kind, types in _JSON_TYPES.items():
        if isinstance(value, bool):
            return "boolean"
        if isinstance(value, types):
            return kind
    return "null" if value is None else type(value).__name__


def validate_arguments(raw: Any, parameters: dict[str, Any]) -> dict[str, Any]:
    """Validate tool-call arguments against an object schema and fill in defaults.

    ``raw`` may be a dict or a JSON object in a string (some models send that).  Returns a
    new dict; raises :class:`ArgumentError` with a message for the model.
    """
    if raw is None:
        raw = {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise ArgumentError(f"arguments are not valid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise ArgumentError(f"arguments must be a JSON object, got {_json_type(raw)}")
    raw = _unaliased(raw, parameters.get(ALIASES_KEY, {}))
    properties: dict[str, Any] = parameters.get("properties", {})
    if parameters.get("additionalProperties") is False:
        unknown = sorted(str(key) for key in raw if key not in properties)
        if unknown:
            accepted = ", ".join(properties) or "none"
            raise ArgumentError(
                f"unknown {plural(len(unknown), 'argument')} {', '.join(unknown)}; "
                f"accepted arguments: {accepted}"
            )
    missing = [key for key in parameters.get("required", []) if raw.get(key) is None]
    if missing:
        raise ArgumentError(
            f"missing required {plural(len(missing), 'argument')}: {', '.join(missing)}"
        )
    result: dict[str, Any] = {}
    for key, schema in properties.items():
        if key in raw and raw[key] is not None:
            result[key] = _coerce(key, raw[key], schema)
        elif "default" in schema:
            result[key] = schema["default"]
    for key, value in raw.items():
        if key not in properties:
            result[str(key)] = value
    return result


def _unaliased(raw: dict[Any, Any], aliases: dict[str, str]) -> dict[Any, Any]:
    """``raw`` with each argument given under another name moved to its own name."""
    if not aliases or not any(alias in raw for alias in aliases):
        return raw
    raw = dict(raw)
    for alias, name in aliases.items():
        if alias not in raw:
            continue
        value = raw.pop(alias)
        if raw.get(name) is None:
            raw[name] = value
        elif value is not None and value != raw[name]:
            raise ArgumentError(
                f"{alias!r} is another name for {name!r}, and they differ: give {name} only"
            )
    return raw


class ToolSource(Protocol):
    """Tools that come and go while the program runs (an MCP server's, zcoder.mcp).

    ``specs`` is read for every request, so it must be cheap; ``shelves`` too: the tools
    it offers on demand, by catalog entry (zcoder.tools.catalog); ``prepare`` runs once at
    the start of each turn (it may start what the tools need) and returns notices for the
    user.
    """

    def specs(self) -> Sequence[ToolSpec]: ...

    def shelves(self) -> Sequence[Shelf]: ...

    async def prepare(self, ctx: ToolContext) -> list[str]: ...


class ToolRegistry:
    """Tools by name.  What a turn is offered depends on its origin and context, and on
    what the model loaded of the tools offered on demand (``catalog``)."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self._sources: list[ToolSource] = []
        self.catalog = Catalog()
        self._order = OfferOrder()

    def add_source(self, source: ToolSource) -> None:
        """Offer a source's tools after the registered ones (names must not collide)."""
        self._sources.append(source)

    async def prepare(self, ctx: ToolContext) -> list[str]:
        """Run every source's start-of-turn step; their notices, in order."""
        notices: list[str] = []
        for source in self._sources:
            notices.extend(await source.prepare(ctx))
        return notices

    def _all(self) -> list[ToolSpec]:
        if not self._sources:
            return list(self._tools.values())
        extra = [spec for source in self._sources for spec in source.specs()]
        return [*self._tools.values(), *(s for s in extra if s.name not in self._tools)]

    def register(self, spec: ToolSpec) -> None:
        """Add a tool; a second tool with the same name is a programming error."""
        if spec.name in self._tools:
            raise ValueError(f"a tool named {spec.name!r} is already registered")
        self._tools[spec.name] = spec

    def _shelves(self, ctx: ToolContext | None) -> list[Shelf]:
        """The catalog's entries (of the tools available in ``ctx``; None: all)."""
        on_demand = [s for s in self._all() if s.offered is Offered.ON_DEMAND]
        shelves = [Shelf.of(spec) for spec in on_demand]
        shelves += [shelf for source in self._sources for shelf in source.shelves()]
        if ctx is None:
            return shelves
        kept = []
        for shelf in shelves:
            tools = tuple(spec for spec in shelf.tools if spec.available(ctx.origin, ctx))
            if tools:
                kept.append(dataclasses.replace(shelf, tools=tools))
        return kept

    def get(self, name: str) -> ToolSpec | None:
        """The tool of that name, offered or not (one on demand, the catalog's)."""
        spec = self._tools.get(name)
        if spec is None and self._sources:
            spec = next((s for s in self._all() if s.name == name), None)
        if spec is None and (shelves := self._shelves(None)):
            if name == LOAD_TOOL:
                return self.catalog.spec(shelves)
            tools = (tool for shelf in shelves for tool in shelf.tools)
            spec = next((tool for tool in tools if tool.name == name), None)
        return spec

    def names(self) -> list[str]:
        return [spec.name for spec in self._all()]

    def available(self, ctx: ToolContext) -> list[ToolSpec]:
        """The tools offered for this turn: those offered always or while their feature
        is on, in registration order (sources' last), then the catalog and the tools the
        model loaded from it; each in the place where it was first offered."""
        specs = [spec for spec in self._all() if spec.available(ctx.origin, ctx)]
        offered = [spec for spec in specs if spec.offered is not Offered.ON_DEMAND]
        shelves = self._shelves(ctx)
        if shelves:
            offered.append(self.catalog.spec(shelves))
            offered.extend(self.catalog.loaded(shelves))
        return self._order.arrange(offered)

    def use_history(self, messages: Sequence[dict[str, Any]]) -> None:
        """A session's history is the conversation now: what it loaded is loaded (a
        resumed session's tools are the ones it had), and the order starts again."""
        self.catalog.restore(asked_in(messages))
        self._order.forget()

    def schemas(self, ctx: ToolContext, *, checked: bool = False) -> list[dict[str, Any]]:
        """The Ollama ``tools`` entries for this turn; ``checked``: as :meth:`dispatch`
        validates them, with what the model is not sent (ToolSpec.schema), and those of
        the tools the catalog lists, which it takes a call to as well."""
        specs = self.available(ctx)
        if checked:  # dispatch takes a call to a tool the catalog lists too (and loads it)
            sent = {spec.name for spec in specs}
            listed = (tool for shelf in self._shelves(ctx) for tool in shelf.tools)
            specs += [tool for tool in listed if tool.name not in sent]
        return [spec.schema(checked=checked) for spec in specs]

    async def dispatch(self, name: str, args: Any, ctx: ToolContext) -> ToolResult:
        """Validate and run one tool call; every failure is a result, never an exception.

        Cancellation (``asyncio.CancelledError``) is the one exception that propagates.
        The result's output is bounded to ``ctx.max_output`` bytes, head and tail.
        """
        spec = next((spec for spec in self.available(ctx) if spec.name == name), None)
        if spec is None and (shelf := self.catalog.shelf_of(name, self._shelves(ctx))):
            self.catalog.ask(name)  # listed, not loaded yet: loaded by the call
            spec = next(tool for tool in shelf.tools if tool.name == name)
        spec = spec or self.get(name)
        if spec is None:
            offered = ", ".join(spec.name for spec in self.available(ctx)) or "none"
            return ToolResult.error(
                f"there is no tool named {name!r}; available tools: {offered}",
                tool=name,
                error_kind="unknown_tool",
            )
        if not spec.available(ctx.origin, ctx):
            if ctx.approval.mode is Mode.PLAN and spec.effects is Effects.WRITES:
                return ToolResult.error(
                    f"plan mode is read-only: {name} may change something and is refused; "
                    "finish the plan instead, the user runs it after accepting it",
                    tool=name,
                    error_kind="plan_mode",
                )
            return ToolResult.error(
                f"the tool {name!r} is not available in this turn",
                tool=name,
                error_kind="unavailable",
            )
        try:
            validated = validate_arguments(args, spec.parameters)
        except ArgumentError as exc:
            return ToolResult.error(
                f"invalid arguments for {name}: {exc}", tool=name, error_kind="invalid_arguments"
            )
        try:
            result = await spec.run(validated, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the model gets text, never a traceback
            return ToolResult.error(
                f"{name} failed unexpectedly: {type(exc).__name__}: {exc}",
                tool=name,
                error_kind="internal",
            )
        result.metadata.setdefault("tool", name)
        result.output = bound_text(result.output, ctx.max_output)
        return result
