"""Running the tool calls of one round: each call shown, run, answered and saved.

Kept apart from the turn loop (agent/core.py), which decides whether a round runs at all
(finish alone, a repeated round, malformed calls); here each call gets its live output,
its transcript entry and its result in the history, whatever happened to it. A round the
loop detector refused is answered here too, every call as refused.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from typing import Any

from zcoder.agent.cancellation import RoundState
from zcoder.agent.events import ErrorNotice, Notice, StatusChanged, ToolFinished, ToolStarted
from zcoder.agent.hook_points import HookPoints
from zcoder.agent.live_output import LiveOutput
from zcoder.agent.prompts import NUDGE_BAD_FINISH
from zcoder.agent.recorder import Recorder
from zcoder.agent.settings import AgentSettings
from zcoder.agent.status import Status
from zcoder.agent.usage import fit_tool_output
from zcoder.model.types import Message, ToolCall
from zcoder.tools.base import ToolContext
from zcoder.tools.finish import FINISH_TOOL_NAME
from zcoder.tools.offload import StopSignal
from zcoder.tools.registry import ToolRegistry

__all__ = ["LOOP_REFUSAL", "ToolRound"]

LOOP_REFUSAL = "Refused: this exact tool round was repeated again."


@dataclass
class ToolRound:
    """The calls of one turn's rounds, answered into ``messages`` (the model history)."""

    registry: ToolRegistry
    settings: AgentSettings
    recorder: Recorder
    messages: list[Message]
    round_state: RoundState
    hooks: HookPoints | None = None  # the user's hooks (zcoder.agent.hook_points)

    def answer(self, call: ToolCall, output: str) -> None:
        self.round_state.answer(self.messages, call, output)

    async def finish_call(self, call: ToolCall, ctx: ToolContext) -> tuple[str, str] | None:
        """``finish`` alone in its round: (status, response) when it was well formed, else
        None (it was answered with why, for the model to correct)."""
        if call.arguments_error:
            self.answer(call, f"Error: {call.arguments_error}")
            return None
        result = await self.registry.dispatch(call.name, call.arguments, ctx)
        self.answer(call, result.output)
        if not result.ok:
            self.recorder.emit(Notice(result.output))
            return None
        response = str(call.arguments.get("response", ""))
        status = str(call.arguments.get("status", "complete"))
        if response.strip():
            self.recorder.assistant(response, streamed=False)
        return status, response

    def refuse(self, calls: list[ToolCall]) -> None:
        """A round the loop detector refused: every call answered, shown and saved so."""
        for call in calls:
            self.answer(call, LOOP_REFUSAL)
            self.recorder.event(
                "tool",
                LOOP_REFUSAL,
                {
                    "name": call.name,
                    "call_id": call.id,
                    "arguments": dict(call.arguments),
                    "status": "failed",
                    "refused": "loop",
                },
            )
            self.recorder.emit(ToolFinished(call.id, call.name, "not_executed", LOOP_REFUSAL))
        self.recorder.event("error", "Loop stopped: the same tool round was repeated again.")
        self.recorder.emit(ErrorNotice("Loop stopped: the same tool round was repeated."))

    async def run_calls(self, calls: list[ToolCall], ctx: ToolContext) -> list[str]:
        """Run a round's calls in order, each answered; calls side by side of a tool that
        runs at once with others (ToolSpec.concurrent: the task tool) run together, and
        are answered in the order of the calls once all of them ended. Their outputs."""
        outputs: list[str] = []
        index = 0
        while index < len(calls):
            together = 1
            while index + together < len(calls) and self._concurrent(calls, index, together):
                together += 1
            if together == 1:
                outputs.append(await self.run_call(calls[index], ctx))
            else:
                group = calls[index : index + together]
                async with asyncio.TaskGroup() as tasks:
                    for call in group:
                        tasks.create_task(self.run_call(call, ctx, hold=True))
                for call in group:
                    output = self.round_state.held.pop(call.id)
                    self.answer(call, output)
                    outputs.append(output)
            index += together
        return outputs

    def _concurrent(self, calls: list[ToolCall], start: int, count: int) -> bool:
        """Whether the call after ``calls[start:start+count]`` runs together with them."""
        pair = (calls[start], calls[start + count])
        specs = [self.registry.get(call.name) for call in pair]
        return all(spec is not None and spec.concurrent for spec in specs)

    async def run_call(self, call: ToolCall, ctx: ToolContext, *, hold: bool = False) -> str:
        """Run one call and answer it (``hold``: keep its result in the round's ``held``,
        answered by the caller); raises CancelledError when the turn was stopped while the
        call wrote (the write finished whole and is recorded as done)."""
        recorder = self.recorder
        recorder.emit(StatusChanged(Status.TOOL, call.name))
        recorder.emit(ToolStarted(call.id, call.name, dict(call.arguments)))
        metadata: dict[str, Any] = {
            "name": call.name,
            "call_id": call.id,
            "arguments": dict(call.arguments),
            "status": "running",
        }
        event_id = recorder.event("tool", "", metadata)
        live = LiveOutput(
            call.id,
            recorder.emit,
            ctx.max_output,
            window=self.settings.num_ctx,
            name=call.name,
            save=lambda so_far: recorder.update_event(event_id, so_far, metadata),
        )
        self.round_state.running[call.id] = (call, event_id, live)
        extra: dict[str, Any] = {}
        stop = StopSignal()
        if call.name == FINISH_TOOL_NAME:
            # finish beside other calls: refused, shown and saved like any failed call.
            ok, output = False, f"Error: {NUDGE_BAD_FINISH}"
        elif call.arguments_error:
            ok, output = False, f"Error: {call.arguments_error}"
        else:
            blocked, permission = (
                await self.hooks.before_tool(call.name, call.arguments)
                if self.hooks is not None
                else (None, "")
            )
            if blocked is not None:
                ok, output = False, f"Error: a hook blocked this call: {blocked}"
            else:
                # A copy, not dataclasses.replace: that would canonicalise the workspace
                # again, a file-system call on the event loop for every tool call.
                call_ctx = copy.copy(ctx)
                call_ctx.on_output, call_ctx.stop = live.feed, stop
                call_ctx.call_id = call.id
                call_ctx.hook_permission = permission
                result = await self.registry.dispatch(call.name, call.arguments, call_ctx)
                ok, output, extra = result.ok, result.output, result.metadata
                if self.hooks is not None:
                    said = await self.hooks.after_tool(call.name, call.arguments, ok, output)
                    output = f"{output}\n{said}" if said else output
        self.round_state.running.pop(call.id, None)
        output = fit_tool_output(output, window=self.settings.num_ctx, name=call.name)
        status = "completed" if ok else "failed"
        recorder.update_event(event_id, output, {**metadata, **_jsonable(extra), "status": status})
        if hold:
            self.round_state.held[call.id] = output
        else:
            self.answer(call, output)
        recorder.emit(ToolFinished(call.id, call.name, status, output, dict(extra)))
        if stop.is_set():
            # The turn was stopped while this call wrote: the write finished whole and is
            # recorded as done (tools/offload.py); the turn stops here.
            raise asyncio.CancelledError
        return output


def _jsonable(metadata: dict[str, Any]) -> dict[str, Any]:
    """Tool metadata as plain JSON values, so that saving it can never fail."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, str | int | float | bool) or value is None:
            out[key] = value
        else:
            out[key] = str(value)
    return out
