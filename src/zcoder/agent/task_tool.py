"""The ``task`` tool: the model hands a self-contained job to a subagent.

Offered on demand (one catalog line, its first sentence); once loaded, its description
also lists the user-defined subagents (agent/subagent_defs.py) its ``subagent_type`` may
name. Each call runs one subagent (agent/subagent.py) and returns its report. Calls side by
side in one response run at once (``ToolSpec.concurrent``), at most as many as the
server has slots (``Subagents.slots``: the ``subagents`` setting, else llama.cpp's
``/props`` ``total_slots``, else 1); the others wait for a slot, and their entries say so.
Their questions to the user come one at a time. The turn's cancellation (Escape) stops
them all: each subagent's loop tidies its own history and the parent's call is answered
as interrupted.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from typing import TYPE_CHECKING, Any, Final, Protocol

from zcoder.agent.events import SubagentProgress
from zcoder.agent.headings import TASK_TOOL
from zcoder.agent.subagent import SubagentJob, run_subagent
from zcoder.model import ModelError
from zcoder.model.protocol import SlotsProbe
from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.modes import Effects

if TYPE_CHECKING:
    from zcoder.agent.recorder import Recorder
    from zcoder.agent.settings import AgentSettings
    from zcoder.agent.subagent_defs import AgentDefinition, AgentSet
    from zcoder.hooks import HookEngine
    from zcoder.model.protocol import ChatClient
    from zcoder.tools import (
        ApprovalDecision,
        Approver,
        CommandApprovalRequest,
        EditApprovalRequest,
        ToolRegistry,
    )

__all__ = ["SUBAGENTS_KEY", "TASK_TOOL", "Subagents", "make_task_tool"]

SUBAGENTS_KEY: Final = "subagents"
"""Where a turn's ToolContext.extras holds its agent's Subagents (none in a subagent's)."""
DESCRIPTION: Final = (
    "Hand a self-contained job to a subagent. It starts with a fresh context, only reads "
    "(unless its type may write) and returns a short report: put all it needs in prompt. "
    "Several task calls in one response run at once."
)


class SubagentParent(Protocol):
    """What subagents need of the agent that runs them (zcoder.agent.core.Agent)."""

    client: ChatClient
    settings: AgentSettings
    registry: ToolRegistry
    recorder: Recorder
    templates_checked: set[str]

    @property
    def hook_engine(self) -> HookEngine | None: ...


class _OneQuestionAtATime:
    """The parent's approver, asked by one subagent at a time (several may run at once)."""

    def __init__(self, approver: Approver, lock: asyncio.Lock) -> None:
        self.approver, self.lock = approver, lock

    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        async with self.lock:
            return await self.approver.approve_command(request)

    async def approve_edit(self, request: EditApprovalRequest) -> ApprovalDecision:
        async with self.lock:
            return await self.approver.approve_edit(request)


class Subagents:
    """One agent's subagents: the slots they share and the runs themselves."""

    def __init__(self, parent: SubagentParent) -> None:
        self.parent = parent
        self._gate: asyncio.Semaphore | None = None
        self._asking = asyncio.Lock()
        self.count = 1

    async def slots(self) -> int:
        """How many subagents may run at once: the setting, else what the server says."""
        if self._gate is None:
            count = self.parent.settings.subagents
            client = self.parent.client
            if count is None and isinstance(client, SlotsProbe):
                count = await client.parallel_slots()
            self._gate = asyncio.Semaphore(max(1, count or 1))
            self.count = max(1, count or 1)
            queue = self.parent.settings.turn_queue
            if queue is not None and queue.places < self.count:
                # The machine's turn queue (zcoder.model.turn_queue) lets as many requests
                # reach the server at once as it has slots: else they would run in turn.
                queue.places = self.count
        return self.count

    async def _settings(self, definition: AgentDefinition | None) -> tuple[AgentSettings, str]:
        """The subagent's settings (never compacting: its budget ends it), and what was
        said of the model its definition names when that model is not served here."""
        settings = dataclasses.replace(self.parent.settings, compact_at=None)
        wanted = definition.model if definition is not None else ""
        if not wanted or wanted == settings.model:
            return settings, ""
        served: list[str] = []
        lister = getattr(self.parent.client, "list_models", None)
        if lister is not None:
            try:
                served = list(await lister())
            except ModelError:
                served = []
        if wanted in served:
            return dataclasses.replace(settings, model=wanted), ""
        note = f"model {wanted!r} is not served here: the subagent used {settings.model}"
        return settings, note

    async def run(self, job: SubagentJob, ctx: ToolContext) -> ToolResult:
        await self.slots()
        assert self._gate is not None
        emit = self.parent.recorder.emit
        if self._gate.locked():
            emit(SubagentProgress(ctx.call_id, "waiting for a free slot", 0, 0))
        async with self._gate:
            settings, note = await self._settings(job.definition)
            if note:
                emit(SubagentProgress(ctx.call_id, note, 0, 0))
            call_ctx = copy.copy(ctx)
            call_ctx.approver = _OneQuestionAtATime(ctx.approver, self._asking)
            report, metadata = await run_subagent(
                job,
                client=self.parent.client,
                settings=settings,
                parent=self.parent.registry,
                ctx=call_ctx,
                emit=emit,
                templates_checked=self.parent.templates_checked,
                hooks=self.parent.hook_engine,
            )
        if note:
            report = f"[{note}]\n{report}"
        return ToolResult(metadata["outcome"] != "error", report, metadata)


def _about(agents: AgentSet) -> str:
    if not agents.agents:
        return DESCRIPTION
    lines = [f"- {agent.name}: {agent.description}" for agent in agents.agents.values()]
    return DESCRIPTION + "\nsubagent_type may name one of these:\n" + "\n".join(lines)


def make_task_tool(agents: AgentSet) -> ToolSpec:
    """The task tool over the user's ``agents`` (listed in its description, which the
    model is sent only once it loads the tool)."""

    async def task(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner = ctx.extras.get(SUBAGENTS_KEY)
        if not isinstance(runner, Subagents):  # a subagent's own context has none
            return ToolResult.error("a subagent cannot start another subagent")
        name = str(args.get("subagent_type") or "").strip()
        definition: AgentDefinition | None = None
        if name:
            definition = agents.get(name)
            if definition is None:
                known = ", ".join(agents.names()) or "none (leave subagent_type out)"
                return ToolResult.error(f"no subagent type {name[:80]!r}; the types: {known}")
        job = SubagentJob(str(args["description"]).strip(), str(args["prompt"]), definition)
        return await runner.run(job, ctx)

    return ToolSpec(
        name=TASK_TOOL,
        description=_about(agents),
        parameters=arguments(
            {
                "description": {"type": "string", "description": "the job in 3-5 words"},
                "prompt": {"type": "string", "description": "the whole job, self-contained"},
                "subagent_type": {"type": "string", "description": "a listed type, if any"},
            },
            required=["description", "prompt"],
        ),
        handler=task,
        offered=Offered.ON_DEMAND,
        effects=Effects.READS,  # what the subagent may change is its own policy's to say
        concurrent=True,
    )
