"""One turn's loop: request, reply, tools, round after round until the turn ends.

The agent (agent/core.py) starts a turn from the user, a relayed task or steering and
hands its ToolContext here. Each round lands the front end's steering at the safe point
before it (agent/steering.py), asks the model (``_request``), and then takes the reply's
one of three ways: no tool calls (``_no_calls``: the answer, or a nudge), ``finish`` alone
(``_finished``), or a round of calls (ToolRound, with loop detection and the nudge for a
malformed round). Cancellation at any await leaves the history consistent
(agent/cancellation.py); a model error keeps streamed text as partial, out of the model
history.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any, Final, Protocol

from zcoder.agent.cancellation import RoundState, tidy_after_cancel
from zcoder.agent.events import AssistantMessage, Outcome, StatusChanged, TurnFinished
from zcoder.agent.loops import LoopDetector
from zcoder.agent.model_request import stream_reply, tools_template_notice
from zcoder.agent.prompts import LOOP_WARNING, NUDGE_EMPTY
from zcoder.agent.status import Status
from zcoder.agent.steering import land_steers
from zcoder.agent.tool_round import ToolRound
from zcoder.agent.usage import cut_off_reason
from zcoder.model import AssistantReply, Message, ModelError, assistant_message, user_message
from zcoder.model.recovery import recover
from zcoder.tools import FINISH_TOOL_NAME, ToolContext, ToolRegistry

if TYPE_CHECKING:
    from zcoder.agent.call_ids import CallIds
    from zcoder.agent.context_keeper import ContextKeeper
    from zcoder.agent.hook_points import HookPoints
    from zcoder.agent.recorder import Recorder
    from zcoder.agent.settings import AgentSettings
    from zcoder.agent.steering import SteerSource
    from zcoder.model.protocol import ChatClient
    from zcoder.model.types import ToolCall

__all__ = ["MAX_NUDGES", "LoopHost", "TurnLoop", "finish_turn"]

MAX_NUDGES: Final = 3
"""Corrective nudges in a row (empty reply, malformed calls, a bad finish) before a turn
ends Incomplete; a well-formed round resets the count."""


class LoopHost(Protocol):
    """What a turn needs of its agent (zcoder.agent.core.Agent)."""

    client: ChatClient
    registry: ToolRegistry
    settings: AgentSettings
    recorder: Recorder
    keeper: ContextKeeper
    hook_points: HookPoints
    call_ids: CallIds
    steering: SteerSource | None
    messages: list[Message]
    user_ledger: list[str]
    templates_checked: set[str]

    def request_messages(self) -> list[Message]: ...

    def tool_schemas(self, ctx: ToolContext, *, checked: bool = False) -> list[dict[str, Any]]: ...


def finish_turn(
    recorder: Recorder,
    messages: list[Message],
    outcome: Outcome,
    response: str = "",
    error: str = "",
    *,
    called_finish: bool = False,
) -> TurnFinished:
    """The end of a turn, however it ended: the history saved, the outcome shown."""
    recorder.save_messages(messages)
    if outcome is Outcome.INCOMPLETE and error:
        recorder.error(f"Incomplete: {error}")
    finished = TurnFinished(outcome, response, error, called_finish=called_finish)
    recorder.emit(StatusChanged(outcome.badge))
    recorder.emit(finished)
    return finished


@dataclasses.dataclass
class TurnLoop:
    """One turn of ``host``'s conversation, its tools given ``ctx``."""

    host: LoopHost
    ctx: ToolContext
    loops: LoopDetector = dataclasses.field(default_factory=LoopDetector)
    nudges: int = 0
    stops: int = 0  # times a Stop hook sent the model on (agent/hook_points.py)
    round: RoundState = dataclasses.field(default_factory=RoundState)
    output_cap: int | None = None  # what the latest request asked for (usage.output_cap)
    token_limit: int | None = None
    """Tokens the server may count for this turn's requests (a goal's budget left); the
    turn ends at the first safe point past it, before another request. None: no limit."""
    request_limit: int | None = None
    """Requests this turn may make (a subagent's turn limit); past them it ends at the
    next safe point, Incomplete. None: no limit."""
    requests: int = 0

    async def run(self) -> TurnFinished:
        host = self.host
        try:
            for notice in await host.registry.prepare(self.ctx):  # MCP servers start
                host.recorder.notice(notice)
            start = host.keeper.meter.spent
            while True:
                # A safe point: every call has its result, the next request is not sent.
                limit = self.token_limit
                if limit is not None and host.keeper.meter.spent - start >= limit:
                    return self.finish(Outcome.INCOMPLETE, error="the token budget is spent")
                if self.request_limit is not None and self.requests >= self.request_limit:
                    return self.finish(
                        Outcome.INCOMPLETE,
                        error=f"the limit of {self.request_limit} turns is reached",
                    )
                self.requests += 1
                land_steers(host.steering, host.messages, host.user_ledger, host.recorder, self.ctx)
                reply, cut_off = await self._request()
                calls = reply.tool_calls
                if not calls:
                    finished = await self._no_calls(reply, cut_off)
                elif len(calls) == 1 and calls[0].name == FINISH_TOOL_NAME:
                    finished = await self._finished(reply, cut_off)
                else:
                    finished = await self._tool_round(reply, cut_off)
                if finished is not None:
                    return finished
        except asyncio.CancelledError:
            tidy_after_cancel(self.round, host.messages, host.recorder)
            self.finish(Outcome.STOPPED)
            raise
        except ModelError as exc:
            # Text that streamed before a mid-stream failure was seen: keep it in the
            # transcript as partial, never in the model history.
            partial = self.round.reply
            if partial is not None and partial.content.strip():
                host.recorder.assistant(partial.content, partial=True)
            host.recorder.error(str(exc))
            host.recorder.save_messages(host.messages)
            return self.finish(Outcome.ERROR, error=str(exc))

    def finish(
        self, outcome: Outcome, response: str = "", error: str = "", *, called: bool = False
    ) -> TurnFinished:
        self.round = RoundState()
        return finish_turn(
            self.host.recorder, self.host.messages, outcome, response, error, called_finish=called
        )

    # -- one round ----------------------------------------------------------------------

    async def _request(self) -> tuple[AssistantReply, str | None]:
        """Ask the model; its reply (a call written as text made a real one, every call
        given an id unused in the session) and why it was cut off, if it was."""
        host, ctx = self.host, self.ctx
        host.recorder.emit(StatusChanged(Status.THINKING))
        self.round = RoundState(reply=AssistantReply())
        request, schemas = host.request_messages(), host.tool_schemas(ctx)
        if await host.keeper.compact_if_needed(request, schemas):
            request = host.request_messages()
        host.keeper.show_estimate(request, schemas)
        if schemas:
            await tools_template_notice(
                host.client, host.settings.model, host.recorder, host.templates_checked
            )
        self.output_cap = host.keeper.output_cap(request, schemas)
        reply = await stream_reply(
            host.client,
            host.settings,
            host.recorder,
            round_state=self.round,
            messages=request,
            tools=schemas,
            num_predict=self.output_cap,
            background=ctx.origin.relayed,
        )
        # A tool call or reasoning the model wrote as text becomes a real one, when the
        # registry would take it as a call (other argument names included).
        stopped = reply.stopped  # a loop cut (agent/model_request.py)
        recovered = recover(reply, host.tool_schemas(ctx, checked=True))
        if recovered is not reply:
            if reply.content.strip() and not recovered.content.strip():
                # All that streamed was a call or reasoning: off the screen.
                host.recorder.emit(AssistantMessage("", streamed=True))
            reply = recovered
        reply.tool_calls = host.call_ids.unique(reply.tool_calls)
        host.keeper.record(reply.done, request, schemas)
        cut_off = stopped or cut_off_reason(
            reply.done,
            num_ctx=host.settings.num_ctx,
            num_predict=self.output_cap,
            requested=host.settings.num_predict,
        )
        return reply, cut_off

    async def _no_calls(self, reply: AssistantReply, cut_off: str | None) -> TurnFinished | None:
        """A reply without tool calls: the turn's answer, or an empty one nudged."""
        host = self.host
        if reply.content.strip():
            host.messages.append(assistant_message(reply.content))
            host.recorder.assistant(reply.content, partial=cut_off is not None)
            if cut_off is not None:
                return self.finish(Outcome.INCOMPLETE, reply.content, error=cut_off)
            if await self._keep_going(reply.content):
                return None
            return self.finish(Outcome.COMPLETE, reply.content)
        if cut_off is not None:
            return self.finish(Outcome.INCOMPLETE, error=cut_off)
        if self._nudged():
            return self.finish(
                Outcome.INCOMPLETE, error="the model gave no usable reply after 3 corrective nudges"
            )
        self._add_context(NUDGE_EMPTY)
        return None

    def _tools(self, reply: AssistantReply, cut_off: str | None) -> ToolRound:
        """The round's calls, entered in the history, and who runs them."""
        host = self.host
        if reply.content.strip():
            host.recorder.assistant(reply.content)
        if cut_off is not None:
            host.recorder.error(cut_off.capitalize())
        host.messages.append(reply.to_message())
        self.round.calls = list(reply.tool_calls)
        self.round.reply = None
        return ToolRound(
            host.registry,
            host.settings,
            host.recorder,
            host.messages,
            self.round,
            host.hook_points,
        )

    async def _finished(self, reply: AssistantReply, cut_off: str | None) -> TurnFinished | None:
        """``finish`` alone in its round: the end of the turn, or a nudge when malformed."""
        finished = await self._tools(reply, cut_off).finish_call(reply.tool_calls[0], self.ctx)
        if finished is not None:
            status, response = finished
            outcome = Outcome.BLOCKED if status == "blocked" else Outcome.COMPLETE
            if outcome is Outcome.COMPLETE and await self._keep_going(response):
                return None
            return self.finish(outcome, response, called=True)
        if self._nudged():
            return self.finish(Outcome.INCOMPLETE, error="finish was called wrongly too often")
        return None

    async def _tool_round(self, reply: AssistantReply, cut_off: str | None) -> TurnFinished | None:
        """A round of calls, each run and answered, unless it repeats a refused round."""
        calls: list[ToolCall] = reply.tool_calls
        tools = self._tools(reply, cut_off)
        pairs = [(call.name, call.arguments) for call in calls]
        if self.loops.should_refuse(pairs):
            tools.refuse(calls)
            return self.finish(Outcome.LOOP_STOPPED, error="the same tool round was repeated")
        results = await tools.run_calls(calls, self.ctx)
        self.host.recorder.save_messages(self.host.messages)
        if self.loops.record(pairs, results):
            self._add_context(LOOP_WARNING)
        # One nudge per malformed response, however many of its calls were bad.
        if not any(call.arguments_error for call in calls):
            self.nudges = 0
        elif self._nudged():
            return self.finish(
                Outcome.INCOMPLETE, error="the model kept sending malformed tool calls"
            )
        return None

    # -- between rounds -----------------------------------------------------------------

    def _nudged(self) -> bool:
        """One more corrective nudge; True when that is one too many."""
        self.nudges += 1
        return self.nudges > MAX_NUDGES

    def _add_context(self, text: str) -> None:
        """A user-role record zcoder adds; shown as a notice, kept out of the ledger."""
        self.host.messages.append(user_message(text))
        self.host.recorder.notice(text, {"context_record": True})

    async def _keep_going(self, response: str) -> bool:
        """A Stop hook's instruction instead of the end of the turn: it joins the history
        and the turn goes on (True), at most MAX_STOP_CONTINUATIONS times a turn."""
        instruction = await self.host.hook_points.stop(response, self.stops)
        if instruction is None:
            return False
        self._add_context(instruction)
        self.stops += 1
        return True
