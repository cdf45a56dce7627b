"""The types every tool shares: its context, its result, its specification, and the
edit gate a context carries (defined here, next to ToolContext, because each names the
other; tools/edits.py builds on both)."""

from __future__ import annotations

import enum
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from zcoder.tools.approval import ApprovalPolicy, Approver
from zcoder.tools.change import FileChange
from zcoder.tools.confinement import canonical_workspace
from zcoder.tools.freshness import FreshnessBook
from zcoder.tools.modes import Effects, Mode
from zcoder.tools.offload import StopSignal
from zcoder.tools.output import max_tool_output_from_env
from zcoder.tools.profiles import Profile, TurnOrigin

__all__ = [
    "WORKSPACE_DIRECTORY",
    "EditGate",
    "Offered",
    "ToolAvailability",
    "ToolContext",
    "ToolHandler",
    "ToolResult",
    "ToolSpec",
    "arguments",
]


class EditGate(Protocol):
    """The turn's keeper of edits: approval (ask mode) before, the journal after."""

    async def review(self, tool: str, changes: Sequence[FileChange], ctx: ToolContext) -> str:
        """Called before anything is written. Returns "" to go ahead, else why not (for
        the model: the user refused, say). Snapshots are taken here."""
        ...

    def committed(self, tool: str, changes: Sequence[FileChange], ctx: ToolContext) -> None:
        """The changes were written."""
        ...

    def record_writes(self, tool: str, changes: Sequence[FileChange]) -> None:
        """Changes already made outside the edit tools (a helper agent's), to journal."""
        ...


@dataclass
class ToolContext:
    """Everything a tool may use during one turn.

    ``workspace`` is canonicalised on construction.  ``extras`` carries turn-scoped data for
    tools added by other parts of the program (for example the relay sender of this turn),
    without this package knowing about them.
    """

    workspace: Path
    profile: Profile
    origin: TurnOrigin
    approval: ApprovalPolicy
    approver: Approver
    max_output: int = field(default_factory=max_tool_output_from_env)
    extras: dict[str, Any] = field(default_factory=dict)
    requested_by: str | None = None
    """Who asked for this turn when it was not the local user (a relayed task's sender),
    as approval dialogs name it."""
    sender_trusted: bool = False
    """A relayed task's sender is one the user trusts (``/agents trust``): its edits are
    not asked about for being relayed (ApprovalPolicy.relayed_edits_ask)."""
    edits: EditGate | None = None
    """The turn's edit gate (approval in ask mode, the journal /undo uses); None: none."""
    freshness: FreshnessBook | None = None
    """What the agent last read or wrote of each file (tools/freshness.py); None: no
    check."""
    on_output: Callable[[str], None] | None = None
    """Where a tool that produces output as it runs (run_command) reports it, piece by
    piece, while it runs; set per call by the agent."""
    hook_permission: str = ""
    """What a PreToolUse hook said of this call (zcoder.hooks): "allow", "ask" or ""; set
    per call by the agent. ApprovalPolicy decides what it may change."""
    stop: StopSignal = field(default_factory=StopSignal)
    """This call's stop request: set when the turn is cancelled while the tool runs; the
    tool's thread checks it in its loops (tools/offload.py). The agent gives every call a
    fresh one."""
    call_id: str = ""
    """The id of the call this context runs (set per call by the agent; "" outside one):
    a tool that reports its progress names its call with it (the task tool)."""

    def __post_init__(self) -> None:
        self.workspace = canonical_workspace(os.fspath(self.workspace))
        if self.max_output <= 0:
            raise ValueError("max_output must be positive")


@dataclass
class ToolResult:
    """What a tool call returns to the model (``output``) and to the UI (``metadata``)."""

    ok: bool
    output: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def error(cls, message: str, **metadata: Any) -> ToolResult:
        """A failed call whose output is a plain-text explanation for the model."""
        return cls(False, f"Error: {message}", dict(metadata))


def arguments(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    """A tool's ``parameters``: an object schema of ``properties``, the ``required`` ones
    named in order, and no other (the registry refuses a call with an unknown argument)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


WORKSPACE_DIRECTORY: dict[str, Any] = {
    "type": "string",
    "description": "directory in the workspace",
    "default": ".",
}
"""The argument naming a directory of the workspace, the workspace itself when not given
(list_files' ``path``, run_command's ``cwd``)."""


ToolHandler = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]
ToolAvailability = Callable[[TurnOrigin, ToolContext], bool]


def _always_available(origin: TurnOrigin, ctx: ToolContext) -> bool:
    return True


class Offered(enum.Enum):
    """When a tool is offered to the model (its schema sent with every request)."""

    ALWAYS = "always"
    """In every request (the tools a model needs every turn: read, edit, list, search,
    run)."""
    ON_DEMAND = "on demand"
    """Listed by the catalog tool, ``load_tools``, and offered once the model loads it (or
    calls it), from then on for the rest of the session, at the end of the list
    (zcoder.tools.catalog)."""
    WHILE_ON = "while a feature is on"
    """In every request while its feature is on: ``availability`` is the feature's switch
    (the relay's tools while the relay is available)."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, model-facing description and JSON schema, and its behaviour.

    ``parameters`` is the JSON schema of the arguments (an ``object`` schema).  ``handler``
    receives arguments already validated against it.  ``availability`` decides, per turn,
    whether the tool is offered at all; the registry checks it again at dispatch time.
    ``offered`` says when it is offered (Offered): a tool offered while a feature is on
    names that feature's switch as its ``availability``. ``effects`` says what its calls
    may change (Effects): plan mode offers and runs only the tools that change nothing.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    handler: ToolHandler
    availability: ToolAvailability = _always_available
    offered: Offered = Offered.ALWAYS
    effects: Effects = Effects.WRITES
    concurrent: bool = False
    """Calls of it side by side in one response run at once (the task tool's subagents,
    each bounded by the server's slots); every other call runs alone, in order."""

    def __post_init__(self) -> None:
        if self.offered is Offered.WHILE_ON and self.availability is _always_available:
            raise ValueError(f"the tool {self.name!r} is offered while a feature is on: which?")

    def schema(self, *, checked: bool = False) -> dict[str, Any]:
        """This tool as an entry of the Ollama ``tools`` request field.

        The model gets the parameters without the bounds the registry checks anyway
        (``additionalProperties``, minimum and maximum, lengths, other names): they cost
        tokens of every request, and a call that breaks them is answered with an error that
        says so. ``checked`` keeps them all: the schema as the registry validates a call,
        which a call the model wrote as text is judged by (zcoder.model.recovery).
        """
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters if checked else _for_model(self.parameters),
            },
        }

    def available(self, origin: TurnOrigin, ctx: ToolContext) -> bool:
        """Offered in this turn: its feature is on, and the mode lets it run."""
        if ctx.approval.mode is Mode.PLAN and self.effects is Effects.WRITES:
            return False
        return self.availability(origin, ctx)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.handler(args, ctx)


# Schema keywords the registry validates but the model need not read.
_CHECKED_ONLY = frozenset(
    {
        "additionalProperties",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "x-aliases",  # registry.ALIASES_KEY: other names a call may use
    }
)


def _for_model(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            key: _for_model(value)
            for key, value in schema.items()
            if key not in _CHECKED_ONLY and not (key == "required" and value == [])
        }
    if isinstance(schema, list):
        return [_for_model(item) for item in schema]
    return schema
