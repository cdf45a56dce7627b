"""One subagent: a job run in a fresh context, whose report is the task tool's result.

The task tool (agent/task_tool.py) hands a self-contained job here. The subagent is a turn
of its own (agent/turn_loop.py's TurnLoop, the loop every turn runs) over a new message
list: a system prompt for subagents (and a user-defined agent's own, agent/subagent_defs.py)
and the job, nothing of the conversation. As the goal's check does (agent/goal_check.py),
it gets a ToolRegistry of its own:

* by default only the tools that change nothing (``Effects.READS``) and run_command under
  plan mode's rules (``Effects.CHECKED``: the read-only classifier; zcoder.tools.modes),
  with an approval policy of its own that is always in plan mode;
* the tools that change something only when an agent definition lists them and the
  user's mode is not plan; then it shares the parent's policy (its mode as the user
  switches it: plan mode refuses them again at once), approver and edit journal, so each
  write is asked and undone as the parent's would be;
* never the task tool (no nesting), the plan, the relay's tools, nor the MCP servers'.

It has a token budget (the server's counts) and a turn limit; a subagent that runs out
returns what it had, with a note saying so. The report is bounded (REPORT_BYTES).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, assert_never

from zcoder.agent import events as ev
from zcoder.agent.call_ids import CallIds
from zcoder.agent.context_keeper import ContextKeeper
from zcoder.agent.events import (
    AgentEvent,
    AssistantDelta,
    ErrorNotice,
    Outcome,
    StatusChanged,
    SubagentProgress,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from zcoder.agent.headings import TASK_TOOL, call_heading
from zcoder.agent.hook_points import HookPoints
from zcoder.agent.plan_keeper import PlanKeeper
from zcoder.agent.prompts import INSTRUCTIONS_HEADER
from zcoder.agent.recorder import Recorder
from zcoder.agent.relay_waits import NOTIFY_WHEN_IDLE, WAIT_FOR_RECEIPT
from zcoder.agent.status import ContextUsage, Status
from zcoder.agent.turn_loop import TurnLoop
from zcoder.mcp.config import split_tool_name
from zcoder.model import Message, system_message, user_message
from zcoder.tools import ApprovalPolicy, Mode, ToolContext, ToolRegistry
from zcoder.tools.base import Offered
from zcoder.tools.finish import FINISH_TOOL_NAME
from zcoder.tools.freshness import FreshnessBook
from zcoder.tools.modes import Effects
from zcoder.tools.offload import StopSignal
from zcoder.tools.output import bound_text
from zcoder.tools.plan import UPDATE_PLAN_TOOL

if TYPE_CHECKING:
    from zcoder.agent.settings import AgentSettings
    from zcoder.agent.steering import SteerSource
    from zcoder.agent.subagent_defs import AgentDefinition
    from zcoder.hooks import HookEngine
    from zcoder.model.protocol import ChatClient

__all__ = [
    "REPORT_BYTES",
    "TOKEN_BUDGET",
    "TURN_LIMIT",
    "SubagentJob",
    "run_subagent",
    "subagent_tools",
]

TOKEN_BUDGET: Final = 30_000
"""Tokens the server may count for one subagent's requests before it must stop."""
TURN_LIMIT: Final = 12
"""Requests one subagent may make."""
REPORT_BYTES: Final = 4096
"""The most of a subagent's report the task tool returns."""
NEVER: Final = frozenset({TASK_TOOL, UPDATE_PLAN_TOOL, NOTIFY_WHEN_IDLE, WAIT_FOR_RECEIPT})
"""Tools no subagent gets: no nesting, the parent's plan, the relay's waits."""

SUBAGENT_PROMPT: Final = """\
You are a subagent of zcoder, a coding agent: you do one job the main agent gives you, in
the workspace {workspace} (every file tool is confined to it), and report back.
- Find things out with the tools; never guess or invent results.
- Nobody answers questions: decide for yourself.
- End with your report as a plain reply (or call finish with it): concise, with the
  paths, lines and facts that matter. The report is all the main agent sees."""
READ_ONLY: Final = """\
You can only read: no tool that changes files is given to you, and run_command runs only
commands that change nothing."""


@dataclasses.dataclass(frozen=True)
class SubagentJob:
    """What the task tool was asked."""

    description: str
    prompt: str
    definition: AgentDefinition | None = None


def subagent_tools(
    parent: ToolRegistry, definition: AgentDefinition | None, *, writes: bool
) -> ToolRegistry:
    """The subagent's registry: the parent's tools it may have (see the module's doc)."""
    registry = ToolRegistry()
    wanted = None if definition is None or definition.tools is None else set(definition.tools)
    for name in parent.names():
        spec = parent.get(name)
        if spec is None or name in NEVER or spec.offered is Offered.WHILE_ON:
            continue
        if split_tool_name(name) is not None:  # an MCP server's: its session is the parent's
            continue
        if wanted is not None and name not in wanted and name != FINISH_TOOL_NAME:
            continue
        if spec.effects is Effects.WRITES and not writes:
            continue
        registry.register(spec)
    return registry


class _Hooks(HookPoints):
    """The user's hooks around each of a subagent's tool calls (PreToolUse can refuse
    one, as in the parent's turn); its end is not the turn's, so no Stop hook runs."""

    async def stop(self, response: str, continuations: int) -> str | None:
        return None


@dataclasses.dataclass(eq=False)
class _Host:
    """A subagent as the turn loop and its context keeper need it (LoopHost)."""

    client: ChatClient
    registry: ToolRegistry
    settings: AgentSettings
    recorder: Recorder
    system: str
    templates_checked: set[str]
    hooks: HookEngine | None = None
    steering: SteerSource | None = None

    def __post_init__(self) -> None:
        self.messages: list[Message] = []
        self.user_ledger: list[str] = []
        self.call_ids = CallIds()
        self.hook_points: HookPoints = _Hooks(self.hooks, self.recorder)
        self.plan = PlanKeeper(self.recorder)
        self.keeper = ContextKeeper(self)
        self.ctx: ToolContext | None = None

    def request_messages(self) -> list[Message]:
        return [system_message(self.system), *self.messages]

    def tool_schemas(self, ctx: ToolContext, *, checked: bool = False) -> list[dict[str, Any]]:
        return self.registry.schemas(ctx, checked=checked)

    def relay_available(self) -> bool:
        return False

    def user_turn_request(self) -> tuple[list[Message], list[dict[str, Any]]]:
        schemas = self.tool_schemas(self.ctx) if self.ctx is not None else []
        return self.request_messages(), schemas

    async def session_started(self, source: str) -> None:
        return None


class _Progress:
    """The subagent's events, told to the parent as SubagentProgress of its call."""

    def __init__(self, call_id: str, emit: Callable[[AgentEvent], None]) -> None:
        self.call_id, self.emit = call_id, emit
        self.keeper: ContextKeeper | None = None
        self.turns = 0
        self.step = ""
        self.steps: list[str] = []  # every call it made, with how it went
        self.refused: list[str] = []  # the calls that failed or were refused, and why
        self._running: dict[str, str] = {}

    def say(self, step: str) -> None:
        self.step = step
        tokens = self.keeper.meter.spent if self.keeper is not None else 0
        self.emit(SubagentProgress(self.call_id, step, self.turns, tokens))

    def __call__(self, event: AgentEvent) -> None:
        """Only what says how it goes: the rest of its events are its own."""
        match event:
            case StatusChanged(status=Status.THINKING):
                self.turns += 1
                self.say("thinking")
            case AssistantDelta() if self.step != "writing":
                self.say("writing")
            case ToolStarted():
                heading = call_heading(event.name, event.arguments)
                self._running[event.call_id] = heading
                self.say(heading)
            case ToolFinished():
                heading = self._running.pop(event.call_id, event.name)
                self.steps.append(f"{'✓' if event.status == 'completed' else '✗'} {heading}")
                if event.status == "failed":
                    first = event.output.strip().split("\n", 1)[0][:200]
                    self.refused.append(f"{event.name}: {first}")
            case ErrorNotice():
                self.steps.append(f"error: {event.text[:200]}")
            case (
                StatusChanged()
                | AssistantDelta()
                | ev.ThinkingDelta()
                | ev.AssistantMessage()
                | ev.ToolOutput()
                | ev.UserCommandStarted()
                | ev.UserCommandFinished()
                | ev.UserSteered()
                | ev.Notice()
                | ev.RelayReceived()
                | ContextUsage()
                | ev.PlanChanged()
                | ev.SubagentProgress()
                | ev.TurnFinished()
            ):
                pass  # its report says how it ended
            case _:
                assert_never(event)


def _system(settings: AgentSettings, definition: AgentDefinition | None, *, writes: bool) -> str:
    parts = [SUBAGENT_PROMPT.format(workspace=settings.workspace)]
    if not writes:
        parts.append(READ_ONLY)
    if definition is not None:
        parts.append(definition.prompt)
    if instructions := settings.instructions_text():
        parts.append(INSTRUCTIONS_HEADER + "\n" + instructions)
    return "\n\n".join(parts)


def writes_allowed(definition: AgentDefinition | None, approval: ApprovalPolicy) -> bool:
    """Whether a subagent may be given tools that change something: its definition lists
    them and the user's mode is not plan."""
    return (
        definition is not None and definition.tools is not None and approval.mode is not Mode.PLAN
    )


async def run_subagent(
    job: SubagentJob,
    *,
    client: ChatClient,
    settings: AgentSettings,
    parent: ToolRegistry,
    ctx: ToolContext,
    emit: Callable[[AgentEvent], None],
    templates_checked: set[str],
    hooks: HookEngine | None = None,
    budget: int = TOKEN_BUDGET,
    turns: int = TURN_LIMIT,
) -> tuple[str, dict[str, Any]]:
    """Run ``job`` for the task call of ``ctx`` (the parent's context of that call); its
    report for the model, and what its transcript entry keeps."""
    writes = writes_allowed(job.definition, ctx.approval)
    registry = subagent_tools(parent, job.definition, writes=writes)
    progress = _Progress(ctx.call_id, emit)
    system = _system(settings, job.definition, writes=writes)
    recorder = Recorder(progress, None, None)  # nothing of it is saved but its report
    host = _Host(client, registry, settings, recorder, system, templates_checked, hooks)
    progress.keeper = host.keeper
    host.ctx = _context(ctx, writes=writes)
    host.messages.append(user_message(job.prompt))
    loop = TurnLoop(host, host.ctx, token_limit=budget, request_limit=turns)
    finished = await loop.run()
    report = _report(finished, host.messages, progress, job)
    metadata = {
        "turns": progress.turns,
        "tokens": host.keeper.meter.spent,
        "steps": "\n".join(progress.steps),
        "read_only": not writes,
        "outcome": finished.outcome.value,
    }
    return report, metadata


def _context(parent: ToolContext, *, writes: bool) -> ToolContext:
    """The subagent's tool context: the parent call's, with a policy of its own in plan
    mode unless it may write (then the parent's, whose mode the user keeps switching)."""
    ctx = copy.copy(parent)  # not dataclasses.replace: no file-system call on the loop
    ctx.approval = parent.approval if writes else parent.approval.planning()
    ctx.extras = {}
    ctx.edits = parent.edits if writes else None
    ctx.freshness = FreshnessBook()
    ctx.on_output, ctx.stop, ctx.call_id, ctx.hook_permission = None, StopSignal(), "", ""
    return ctx


def _report(
    finished: TurnFinished, messages: list[Message], progress: _Progress, job: SubagentJob
) -> str:
    """What the parent's model reads: the subagent's report, what it could not do, how it
    ended; bounded to REPORT_BYTES (the report's head and tail)."""
    text = finished.response.strip()
    if not text:
        said = [m.get("content") for m in messages if m.get("role") == "assistant"]
        text = next((str(s).strip() for s in reversed(said) if s and str(s).strip()), "")
    notes = []
    if finished.outcome is not Outcome.COMPLETE:
        why = finished.error or finished.outcome.value
        notes.append(f"[The subagent stopped before it finished ({why}); this is what it had.]")
    if progress.refused:
        listed = "\n".join(f"- {line}" for line in progress.refused[:6])
        notes.append(f"[Calls of the subagent that failed or were refused:\n{listed}]")
    if not text:
        steps = ", ".join(progress.steps[-8:]) or "none"
        text = f"(The subagent wrote no report. Its last calls: {steps}.)"
    label = f"{job.definition.name} " if job.definition is not None else ""
    tokens = progress.keeper.meter.spent if progress.keeper is not None else 0
    notes.append(
        f"[subagent {label}'{job.description}': {progress.turns} turns, {tokens:,} tokens]"
    )
    tail = "\n\n" + "\n".join(notes)
    room = max(256, REPORT_BYTES - len(tail.encode()))
    return bound_text(text, room) + tail
