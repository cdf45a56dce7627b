"""Tools offered on demand: one catalog tool lists them, and loads them when asked.

Every tool's schema is sent with every request: on a window of 8,192 tokens each one is
room the conversation does not have. So a tool that is rarely needed is declared
``Offered.ON_DEMAND`` (zcoder.tools.base), whatever its origin: a built-in tool, an
extension's, the relay's, or an MCP server's (all of a server's tools, when their schemas
would take too much of a small window: zcoder.mcp.catalog). In their place the model is sent
one tool, ``load_tools``, whose description is the catalog: one line per entry, a tool
(its name and the first sentence of its description) or a group of tools (an MCP server:
its name, its line about itself and its tools' names). ``load_tools(name)`` loads an entry;
a call to a listed tool loads its entry too, then runs. A loaded entry is offered from the
next request on, for the rest of the session.

The requests stay cheap for the server's cache (docs/models.md, "Requests the server's
cache can reuse"): the registry offers its tools in the order it first offered them
(``OfferOrder``), so a loaded tool joins the end of the list and nothing offered before
moves. What a session loaded is read back from its history when it is resumed
(``asked_in``); compaction leaves the catalog alone.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from zcoder.base.plural import counted
from zcoder.tools.base import ToolContext, ToolHandler, ToolResult, ToolSpec
from zcoder.tools.modes import Effects

__all__ = ["LOAD_TOOL", "Catalog", "OfferOrder", "Shelf", "asked_in", "calls_in"]

LOAD_TOOL: Final = "load_tools"
MAX_NAMES_PER_GROUP: Final = 60
"""Tool names a group's catalog line lists; the rest are counted."""
MAX_ABOUT: Final = 60
"""Characters of a tool's first sentence its catalog line keeps (cut at a word)."""

HEADER: Final = "Load a tool (or an MCP server's tools) to call it from your next step:"

_SENTENCE_END = re.compile(r"[.;](\s|$)")


def first_sentence(text: str) -> str:
    """The start of a description, up to its first full stop or semicolon outside
    brackets (bounded)."""
    end = len(text)
    for found in _SENTENCE_END.finditer(text):
        before = text[: found.start()]
        if before.count("(") <= before.count(")"):
            end = found.start()
            break
    sentence = " ".join(text[:end].split())
    if len(sentence) <= MAX_ABOUT:
        return sentence
    return sentence[: MAX_ABOUT - 1].rsplit(" ", 1)[0].rstrip(" ,(") + "…"


@dataclass(frozen=True)
class Shelf:
    """One entry of the catalog: what ``load_tools(name)`` loads.

    A single tool (``name`` is the tool's) or a group of them (an MCP server's)."""

    name: str
    about: str
    tools: tuple[ToolSpec, ...]
    listed: tuple[str, ...] = ()
    """The names a group's line shows (an MCP tool's own name); default: the tools'."""
    names_shown: bool = True
    """False: a group's line is its name and about alone (loading it says the names)."""

    @classmethod
    def of(cls, spec: ToolSpec) -> Shelf:
        """One tool on a shelf of its own."""
        return cls(spec.name, first_sentence(spec.description), (spec,))

    def line(self) -> str:
        """This entry's line of the catalog."""
        if [spec.name for spec in self.tools] == [self.name] or not self.names_shown:
            return f"- {self.name}: {self.about}"
        names = list(self.listed or (spec.name for spec in self.tools))
        shown = ", ".join(names[:MAX_NAMES_PER_GROUP])
        if len(names) > MAX_NAMES_PER_GROUP:
            shown += f", and {len(names) - MAX_NAMES_PER_GROUP} more"
        return f"- {self.name}: {self.about + ' — ' if self.about else ''}tools: {shown}"


class Catalog:
    """What the model asked for, and the tool it asks with."""

    def __init__(self) -> None:
        self.asked: dict[str, None] = {}
        """Names of entries loaded, or of tools called, in the order the model did."""

    def loaded(self, shelves: Iterable[Shelf]) -> list[ToolSpec]:
        """The tools of the loaded ``shelves``, in the order they were loaded."""
        rank = {name: index for index, name in enumerate(self.asked)}
        chosen: list[tuple[int, Shelf]] = []
        for shelf in shelves:
            ranks = [rank[n] for n in (shelf.name, *(s.name for s in shelf.tools)) if n in rank]
            if ranks:
                chosen.append((min(ranks), shelf))
        chosen.sort(key=lambda pair: pair[0])
        return [spec for _rank, shelf in chosen for spec in shelf.tools]

    def ask(self, name: str) -> None:
        """Load the entry named ``name``, or the one holding the tool of that name."""
        self.asked.setdefault(name)

    def restore(self, names: Iterable[str]) -> None:
        """What a session asked for before (``asked_in`` its history); forgets the rest."""
        self.asked = dict.fromkeys(names)

    def shelf_of(self, tool: str, shelves: Iterable[Shelf]) -> Shelf | None:
        return next((s for s in shelves if any(spec.name == tool for spec in s.tools)), None)

    def spec(self, shelves: Sequence[Shelf]) -> ToolSpec:
        """``load_tools``: the catalog of ``shelves`` as its description."""
        by_name = {shelf.name: shelf for shelf in shelves}
        parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "as listed"},
            },
            "required": ["name"],
        }
        description = "\n".join([HEADER, *(shelf.line() for shelf in shelves)])
        handler: ToolHandler = functools.partial(self._load, by_name)
        return ToolSpec(LOAD_TOOL, description, parameters, handler, effects=Effects.READS)

    async def _load(
        self, shelves: Mapping[str, Shelf], arguments: dict[str, Any], _ctx: ToolContext
    ) -> ToolResult:
        name = str(arguments.get("name", ""))
        shelf = shelves.get(name)
        if shelf is None:
            known = ", ".join(shelves) or "none"
            return ToolResult.error(f"nothing named {name!r} can be loaded; loadable: {known}")
        names = ", ".join(spec.name for spec in shelf.tools)
        if self.loaded([shelf]):
            return ToolResult(True, f"{name!r} is loaded already: {names}")
        self.ask(name)
        them = "it" if len(shelf.tools) == 1 else "them"
        return ToolResult(
            True,
            f"Loaded {counted(len(shelf.tools), 'tool')} ({name}); call {them} from your next "
            f"step: {names}",
            {"loaded": name},
        )


class OfferOrder:
    """The order tools are offered in: the order they were first offered. A tool offered
    before keeps its place; a new one goes at the end (so a request's tools list begins
    with the previous request's, and the server's cache of it stays good)."""

    def __init__(self) -> None:
        self._order: dict[str, None] = {}

    def arrange(self, wanted: Sequence[ToolSpec]) -> list[ToolSpec]:
        by_name = {spec.name: spec for spec in wanted}
        for name in by_name:
            self._order.setdefault(name)
        return [by_name[name] for name in self._order if name in by_name]

    def forget(self) -> None:
        self._order = {}


def calls_in(message: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """The tool calls a history's message holds: (name, arguments), the arguments decoded
    when a server sent them as JSON text."""
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, str):  # an OpenAI-compatible server's form
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        yield function["name"], arguments


def asked_in(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """What a history asked the catalog for: the entries ``load_tools`` named, and every
    tool called (a call to a listed tool loads it), in order."""
    asked: dict[str, None] = {}
    for message in messages:
        for name, arguments in calls_in(message):
            if name != LOAD_TOOL:
                asked.setdefault(name)
            elif isinstance(arguments, Mapping) and isinstance(arguments.get("name"), str):
                asked.setdefault(arguments["name"])
    return list(asked)
