"""The turn loop: one common body for turns of every origin.

prepare → request → tools → completion → loop detection → persistence. A turn starts from
the user (``run_user_turn``) or from a relayed task (``run_relay_turn``); both then run
``_run_turn``. Cancellation (the task being cancelled at any await) leaves the history
consistent: a partial reply is kept out of the model history and marked partial in the
transcript, and every tool call of the round gets a result (interrupted, not executed;
agent/cancellation.py). What a turn shows and saves goes through its Recorder
(agent/recorder.py); the context window (the meter, /context's breakdown, compaction) is
its ContextKeeper's (agent/context_keeper.py).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

from zcoder.agent.cancellation import RoundState, tidy_after_cancel
from zcoder.agent.context_keeper import CompactResult, ContextKeeper
from zcoder.agent.edits import EditJournal
from zcoder.agent.events import (
    AssistantDelta,
    AssistantMessage,
    ErrorNotice,
    EventSink,
    Notice,
    Outcome,
    RelayReceived,
    StatusChanged,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UserCommandFinished,
)
from zcoder.agent.instructions import load_instructions, render_instructions
from zcoder.agent.live_output import LiveOutput
from zcoder.agent.loops import LoopDetector
from zcoder.agent.prompts import (
    LOOP_WARNING,
    NUDGE_BAD_FINISH,
    NUDGE_EMPTY,
    system_prompt,
)
from zcoder.agent.recorder import Recorder
from zcoder.agent.relay_tools import RELAY_SENDER_KEY, restrict_schemas
from zcoder.agent.relay_wrapper import relay_wrapper
from zcoder.agent.status import ContextUsage, Status
from zcoder.agent.usage import (
    Breakdown,
    ContextMeter,
    cut_off_reason,
    fit_tool_output,
)
from zcoder.agent.user_command import run_user_command
from zcoder.config import DEFAULT_COMPACT_AT, Config
from zcoder.mcp import attach_mcp
from zcoder.model import (
    AssistantReply,
    ChatEvent,
    ContentDelta,
    Message,
    ModelError,
    ModelStreamError,
    ToolCall,
    assistant_message,
    system_message,
    user_message,
)
from zcoder.model import ThinkingDelta as ModelThinking
from zcoder.model.recovery import recover
from zcoder.model.watch import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_REPLY_CHARS, watched
from zcoder.relay import Envelope
from zcoder.relay.display import sender_from, sender_name
from zcoder.sessions import SessionStore
from zcoder.tools import (
    FINISH_TOOL_NAME,
    ApprovalPolicy,
    Approver,
    Profile,
    ToolContext,
    ToolRegistry,
    TurnOrigin,
)
from zcoder.tools.freshness import FreshnessBook
from zcoder.tools.offload import StopSignal

MAX_NUDGES: Final = 3
"""Corrective nudges in a row (empty reply, malformed calls, a bad finish) before a turn
ends Incomplete; a well-formed round resets the count."""
RETRY_DELAY_SECONDS: Final = 0.5
"""The pause before the one retry of a request that failed before any response."""


@runtime_checkable
class ToolsTemplateProbe(Protocol):
    """A client that can tell when the server's chat template drops tools (the
    OpenAI-compatible client, from llama-server's /props)."""

    async def tools_template_warning(self, model: str) -> str | None: ...


class ChatClient(Protocol):
    """What the agent needs of the Ollama client (zcoder.model.OllamaClient)."""

    def chat(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        think: bool | None = None,
        num_predict: int | None = None,
        num_ctx: int | None = None,
        keep_alive: str | int | None = None,
    ) -> AsyncIterator[ChatEvent]: ...


@dataclass
class AgentSettings:
    model: str
    workspace: Path
    profile: Profile
    think: bool | None = None
    num_predict: int | None = 8192
    num_ctx: int | None = None
    """The context window in tokens, sent with every request (Ollama's options.num_ctx)."""
    keep_alive: str | int | None = None
    """How long Ollama keeps the model loaded after a request; None: Ollama's default."""
    compact_at: float | None = DEFAULT_COMPACT_AT
    """Compact before a request that would pass this share of the window; None: never."""
    max_tool_output: int = 32768
    instructions: str = ""
    retry_delay: float = RETRY_DELAY_SECONDS
    idle_timeout: float | None = DEFAULT_IDLE_SECONDS
    """Seconds without new output before a reply is stopped (zcoder.model.watch)."""
    max_reply_chars: int | None = DEFAULT_MAX_REPLY_CHARS
    """Characters of one reply after which it is stopped (zcoder.model.watch)."""
    mcp_home: Path | None = None
    """Where the user's mcp.json (and the consent to project servers) is: MCP servers are
    offered only when set (zcoder.mcp); None: no MCP at all."""

    def watched(self, stream: AsyncIterator[ChatEvent]) -> AsyncGenerator[ChatEvent, None]:
        """``stream`` within these settings' idle deadline and reply cap: every request
        the agent makes (turns, and compaction's summary) is bounded so."""
        return watched(stream, idle_seconds=self.idle_timeout, max_chars=self.max_reply_chars)

    @classmethod
    def from_config(cls, config: Config, model: str) -> AgentSettings:
        """The settings zcoder runs ``model`` with: the app's and ``--prompt``'s, from the
        validated configuration, with the workspace's AGENTS.md chain read now."""
        return cls(
            model=model,
            workspace=config.workspace,
            profile=config.profile,
            think=config.think,
            num_predict=config.max_output_tokens,
            keep_alive=config.keep_alive,
            compact_at=config.compact_at,
            max_tool_output=config.max_tool_output,
            instructions=render_instructions(load_instructions(config.workspace, config.home)),
            idle_timeout=config.idle_timeout,
            max_reply_chars=config.max_reply_chars,
            mcp_home=config.home,
        )


class Agent:
    def __init__(
        self,
        *,
        client: ChatClient,
        registry: ToolRegistry,
        settings: AgentSettings,
        approval: ApprovalPolicy,
        approver: Approver,
        on_event: EventSink,
        store: SessionStore | None = None,
        session_id: str | None = None,
        relay_available: Callable[[], bool] = lambda: False,
    ) -> None:
        self.client = client
        self.registry = registry
        self.settings = settings
        self.approval = approval
        self.approver = approver
        self.recorder = Recorder(on_event, store, session_id)
        self.relay_available = relay_available
        self.messages: list[Message] = []  # model history, without the system message
        self.user_ledger: list[str] = []  # exactly what the user typed
        self._round = RoundState()
        # Models whose chat template was checked for tool support (warned once each).
        self._templates_checked: set[str] = set()
        # The output limit the latest request asked for (zcoder.agent.usage.output_cap).
        self._output_cap: int | None = settings.num_predict
        self.keeper = ContextKeeper(self)
        # Every file the tools change, by turn, for /diff and /undo (agent/edits.py).
        self.edits = EditJournal(
            settings.workspace,
            home=store.home if store is not None else None,
            policy=approval.edits,
        )
        self.edits.use_session(session_id)
        # What each file held when the agent last read or wrote it: edits over changes it
        # has not seen are refused (tools/freshness.py).
        self.freshness = FreshnessBook()
        # Other live instances in this workspace or one around it, as the system prompt
        # names them ("" when none); kept current by the front end (tui/relay_ui.py).
        self.workspace_peers = ""
        # The MCP servers' tools join the registry (zcoder.mcp); None when none is set up.
        self.mcp = (
            attach_mcp(registry, settings.workspace, settings.mcp_home)
            if settings.mcp_home is not None
            else None
        )

    # -- sessions -----------------------------------------------------------------------

    def use_session(self, session_id: str, messages: list[Message], ledger: list[str]) -> None:
        self.recorder.session_id = session_id
        self.edits.use_session(session_id)
        self.freshness.forget()  # this session's model read nothing in this process yet
        self.messages = [m for m in messages if m.get("role") != "system"]
        self.user_ledger = list(ledger)
        self.keeper.meter.reset()

    def record_error(self, text: str, metadata: dict[str, Any] | None = None) -> None:
        """Save an error the front end showed (a quarantined relay message, say)."""
        self.recorder.event("error", text, metadata)

    # -- entry points -------------------------------------------------------------------

    async def run_user_turn(self, text: str) -> TurnFinished:
        """A prompt the user typed: it enters the ledger and may title the session."""
        self.user_ledger.append(text)
        self.messages.append(user_message(text))
        self.recorder.save(lambda store, sid: store.record_user_message(sid, text))
        self.recorder.save_messages(self.messages)
        return await self._run_turn(TurnOrigin.USER, {}, label=text)

    async def run_user_command(self, command: str) -> UserCommandFinished:
        """``!command``: run it without approval and add it to the conversation as
        context, without a turn (zcoder.agent.user_command)."""
        return await run_user_command(
            command, settings=self.settings, messages=self.messages, recorder=self.recorder
        )

    async def run_relay_turn(self, envelope: Envelope) -> TurnFinished:
        """A task relayed by another instance: shown, wrapped, never in the ledger or title."""
        self.recorder.emit(
            RelayReceived(
                sender_project=envelope.sender_project,
                sender_pid=envelope.sender_pid,
                sender_workspace=envelope.sender_workspace,
                sender_instance_id=envelope.sender_instance_id,
                body=envelope.body,
                sender_kind=envelope.sender_kind,
            )
        )
        self.recorder.event(
            "relay",
            envelope.body,
            {
                "sender_project": envelope.sender_project,
                "sender_pid": envelope.sender_pid,
                "sender_workspace": envelope.sender_workspace,
                "sender_instance_id": envelope.sender_instance_id,
                "message_id": envelope.message_id,
                "sender_kind": envelope.sender_kind,
            },
        )
        self.messages.append(user_message(relay_wrapper(envelope)))
        self.recorder.save_messages(self.messages)
        if self.approval.revoke_always():
            text = (
                "A relayed task is now part of this conversation, so your earlier `a` "
                "(allow commands) no longer applies: commands ask again until you press "
                "`a` anew."
            )
            self.recorder.event("system", text)
            self.recorder.emit(Notice(text))
        return await self._run_turn(
            TurnOrigin.RELAY,
            {RELAY_SENDER_KEY: envelope.sender_instance_id},
            requested_by=sender_from(envelope),
            label=f"relayed from {sender_name(envelope)}",
        )

    # -- the common body ----------------------------------------------------------------

    def _context(
        self, origin: TurnOrigin, extras: dict[str, Any], requested_by: str | None = None
    ) -> ToolContext:
        return ToolContext(
            workspace=self.settings.workspace,
            profile=self.settings.profile,
            origin=origin,
            approval=self.approval,
            approver=self.approver,
            max_output=self.settings.max_tool_output,
            extras=dict(extras),
            requested_by=requested_by,
            edits=self.edits,
            freshness=self.freshness,
        )

    def request_messages(self) -> list[Message]:
        """Exactly one system message, first, then the history."""
        prompt = system_prompt(
            self.settings.profile,
            self.settings.workspace,
            instructions=self.settings.instructions,
            relay_available=self.relay_available(),
            workspace_peers=self.workspace_peers,
        )
        return [system_message(prompt), *self.messages]

    def tool_schemas(self, ctx: ToolContext, *, checked: bool = False) -> list[dict[str, Any]]:
        """The turn's tools as the model is sent them; ``checked``: as the registry
        validates a call (ToolSpec.schema)."""
        return restrict_schemas(self.registry.schemas(ctx, checked=checked), ctx)

    def user_turn_request(self) -> tuple[list[Message], list[dict[str, Any]]]:
        """What the next user turn's first request would send: messages and tool schemas."""
        return self.request_messages(), self.tool_schemas(self._context(TurnOrigin.USER, {}))

    # -- the context window (zcoder.agent.context_keeper) -------------------------------

    @property
    def meter(self) -> ContextMeter:
        return self.keeper.meter

    def context_breakdown(self) -> Breakdown:
        """Where the tokens of the next request go (for /context), with the output limit."""
        return dataclasses.replace(self.keeper.breakdown(), max_output=self.settings.num_predict)

    def usage_now(self) -> ContextUsage:
        """The meter's reading: the last real count, or an estimate of the next request."""
        return self.keeper.usage_now()

    async def compact(self, focus: str = "", *, automatic: bool = False) -> CompactResult:
        """Replace older history with a summary the model writes; keep the latest turns."""
        return await self.keeper.compact(focus, automatic=automatic)

    def record_receipt(self, record: str, shown: str, metadata: dict[str, Any]) -> None:
        """A receipt for a task this instance sent: context for the model (``record``, see
        relay_wrapper.receipt_record), shown as ``shown``. It starts no turn."""
        self.messages.append(user_message(record))
        self.recorder.save_messages(self.messages)
        self.recorder.event("receipt", shown, metadata)

    def _add_context(self, text: str) -> None:
        """A user-role record zcoder adds; shown as a notice, kept out of the ledger."""
        self.messages.append(user_message(text))
        self.recorder.event("system", text, {"context_record": True})
        self.recorder.emit(Notice(text))

    def note_for_model(self, text: str, shown: str) -> None:
        """Something the user did between turns (an /undo, say): ``text`` enters the
        model history as a user-role record, ``shown`` is the transcript's notice; both
        are saved at once."""
        self.messages.append(user_message(text))
        self.recorder.event("system", shown)
        self.recorder.emit(Notice(shown))
        self.recorder.save_messages(self.messages)

    async def _run_turn(
        self,
        origin: TurnOrigin,
        extras: dict[str, Any],
        *,
        requested_by: str | None = None,
        label: str = "",
    ) -> TurnFinished:
        ctx = self._context(origin, extras, requested_by)
        self.edits.begin_turn(label)
        loops = LoopDetector()
        nudges = 0
        self._round = RoundState()
        try:
            for notice in await self.registry.prepare(ctx):  # MCP servers start (zcoder.mcp)
                self.recorder.event("system", notice)
                self.recorder.emit(Notice(notice))
            while True:
                self.recorder.emit(StatusChanged(Status.THINKING))
                self._round = RoundState(reply=AssistantReply())
                request, schemas = self.request_messages(), self.tool_schemas(ctx)
                if await self.keeper.compact_if_needed(request, schemas):
                    request = self.request_messages()
                self.keeper.show_estimate(request, schemas)
                if schemas:
                    await self._check_tools_template()
                reply = await self._request(request, schemas)
                # A tool call or reasoning the model wrote as text becomes a real one, when
                # the registry would take it as a call (other argument names included).
                recovered = recover(reply, self.tool_schemas(ctx, checked=True))
                if recovered is not reply:
                    if reply.content.strip() and not recovered.content.strip():
                        # All that streamed was a call or reasoning: off the screen.
                        self.recorder.emit(AssistantMessage("", streamed=True))
                    reply = recovered
                self.keeper.record(reply.done, request, schemas)
                cut_off = cut_off_reason(
                    reply.done,
                    num_ctx=self.settings.num_ctx,
                    num_predict=self._output_cap,
                    requested=self.settings.num_predict,
                )
                calls = reply.tool_calls
                if not calls:
                    if reply.content.strip():
                        self.messages.append(assistant_message(reply.content))
                        self.recorder.assistant(reply.content, partial=cut_off is not None)
                        if cut_off is not None:
                            return self._finish(Outcome.INCOMPLETE, reply.content, error=cut_off)
                        return self._finish(Outcome.COMPLETE, reply.content)
                    if cut_off is not None:
                        return self._finish(Outcome.INCOMPLETE, error=cut_off)
                    nudges += 1
                    if nudges > MAX_NUDGES:
                        return self._finish(
                            Outcome.INCOMPLETE,
                            error="the model gave no usable reply after 3 corrective nudges",
                        )
                    self._add_context(NUDGE_EMPTY)
                    continue
                if reply.content.strip():
                    self.recorder.assistant(reply.content)
                if cut_off is not None:
                    self.recorder.event("error", cut_off.capitalize())
                    self.recorder.emit(ErrorNotice(cut_off.capitalize()))
                self.messages.append(reply.to_message())
                self._round.calls = list(calls)
                self._round.reply = None
                if len(calls) == 1 and calls[0].name == FINISH_TOOL_NAME:
                    finished = await self._finish_call(calls[0], ctx)
                    if finished is not None:
                        return finished
                    nudges += 1
                    if nudges > MAX_NUDGES:
                        return self._finish(
                            Outcome.INCOMPLETE, error="finish was called wrongly too often"
                        )
                    continue
                pairs = [(call.name, call.arguments) for call in calls]
                if loops.should_refuse(pairs):
                    refused = "Refused: this exact tool round was repeated again."
                    for call in calls:
                        self._answer(call, refused)
                        self.recorder.event(
                            "tool",
                            refused,
                            {
                                "name": call.name,
                                "call_id": call.id,
                                "arguments": dict(call.arguments),
                                "status": "failed",
                                "refused": "loop",
                            },
                        )
                        self.recorder.emit(
                            ToolFinished(call.id, call.name, "not_executed", refused)
                        )
                    self.recorder.event(
                        "error", "Loop stopped: the same tool round was repeated again."
                    )
                    self.recorder.emit(
                        ErrorNotice("Loop stopped: the same tool round was repeated.")
                    )
                    return self._finish(
                        Outcome.LOOP_STOPPED, error="the same tool round was repeated"
                    )
                results = []
                for call in calls:
                    results.append(await self._run_call(call, ctx))
                self.recorder.save_messages(self.messages)
                if loops.record(pairs, results):
                    self._add_context(LOOP_WARNING)
                # One nudge per malformed response, however many of its calls were bad.
                if any(call.arguments_error for call in calls):
                    nudges += 1
                    if nudges > MAX_NUDGES:
                        return self._finish(
                            Outcome.INCOMPLETE,
                            error="the model kept sending malformed tool calls",
                        )
                else:
                    nudges = 0
        except asyncio.CancelledError:
            tidy_after_cancel(self._round, self.messages, self.recorder)
            self._finish(Outcome.STOPPED)
            raise
        except ModelError as exc:
            # Text that streamed before a mid-stream failure was seen: keep it in the
            # transcript as partial, never in the model history.
            partial = self._round.reply
            if partial is not None and partial.content.strip():
                self.recorder.assistant(partial.content, partial=True)
            self.recorder.event("error", str(exc))
            self.recorder.emit(ErrorNotice(str(exc)))
            self.recorder.save_messages(self.messages)
            return self._finish(Outcome.ERROR, error=str(exc))

    async def _check_tools_template(self) -> None:
        """Once per model: warn when the server's chat template cannot take tools (the
        server accepts them silently and the model never sees a schema)."""
        model = self.settings.model
        if model in self._templates_checked or not isinstance(self.client, ToolsTemplateProbe):
            return
        self._templates_checked.add(model)
        warning = await self.client.tools_template_warning(model)
        if warning:
            self.recorder.event("system", warning, {"tools_template": False})
            self.recorder.emit(Notice(warning))

    async def _request(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> AssistantReply:
        """Stream one reply; one retry for a connection error before any response."""
        retried = False
        cap = self.keeper.output_cap(messages, tools)
        self._output_cap = cap
        while True:
            reply = AssistantReply()
            self._round.reply = reply
            received = False
            try:
                stream = self.client.chat(
                    self.settings.model,
                    messages,
                    tools=tools or None,
                    think=self.settings.think,
                    num_predict=cap,
                    num_ctx=self.settings.num_ctx,
                    keep_alive=self.settings.keep_alive,
                )
                async for event in self.settings.watched(stream):
                    received = True
                    reply.add(event)
                    if isinstance(event, ContentDelta) and event.text:
                        self.recorder.emit(AssistantDelta(event.text))
                    elif isinstance(event, ModelThinking) and event.text:
                        self.recorder.emit(ThinkingDelta(event.text))
                return reply
            except ModelError as exc:
                if retried:
                    raise
                if exc.retryable_before_response and not received:
                    retried = True
                    self.recorder.emit(Notice(f"{exc} — retrying once"))
                    await asyncio.sleep(self.settings.retry_delay)
                    continue
                if isinstance(exc, ModelStreamError):
                    # A malformed or unfinished reply: asked again once, then reported.
                    retried = True
                    if reply.content.strip():
                        self.recorder.assistant(reply.content, partial=True)
                    self.recorder.emit(Notice(f"{exc} — asking again once"))
                    await asyncio.sleep(self.settings.retry_delay)
                    continue
                raise

    def _answer(self, call: ToolCall, output: str) -> None:
        self._round.answer(self.messages, call, output)

    async def _finish_call(self, call: ToolCall, ctx: ToolContext) -> TurnFinished | None:
        if call.arguments_error:
            self._answer(call, f"Error: {call.arguments_error}")
            return None
        result = await self.registry.dispatch(call.name, call.arguments, ctx)
        self._answer(call, result.output)
        if not result.ok:
            self.recorder.emit(Notice(result.output))
            return None
        response = str(call.arguments.get("response", ""))
        status = str(call.arguments.get("status", "complete"))
        if response.strip():
            self.recorder.assistant(response, streamed=False)
        outcome = Outcome.BLOCKED if status == "blocked" else Outcome.COMPLETE
        return self._finish(outcome, response)

    async def _run_call(self, call: ToolCall, ctx: ToolContext) -> str:
        self.recorder.emit(StatusChanged(Status.TOOL, call.name))
        self.recorder.emit(ToolStarted(call.id, call.name, dict(call.arguments)))
        metadata: dict[str, Any] = {
            "name": call.name,
            "call_id": call.id,
            "arguments": dict(call.arguments),
            "status": "running",
        }
        event_id = self.recorder.event("tool", "", metadata)
        self._round.running = (call, event_id)
        live = LiveOutput(
            call.id,
            self.recorder.emit,
            ctx.max_output,
            window=self.settings.num_ctx,
            name=call.name,
            save=lambda so_far: self.recorder.update_event(event_id, so_far, metadata),
        )
        self._round.output = live
        extra: dict[str, Any] = {}
        stop = StopSignal()
        if call.name == FINISH_TOOL_NAME:
            # finish beside other calls: refused, shown and saved like any failed call.
            ok, output = False, f"Error: {NUDGE_BAD_FINISH}"
        elif call.arguments_error:
            ok, output = False, f"Error: {call.arguments_error}"
        else:
            # A copy, not dataclasses.replace: that would canonicalise the workspace
            # again, a file-system call on the event loop for every tool call.
            call_ctx = copy.copy(ctx)
            call_ctx.on_output, call_ctx.stop = live.feed, stop
            result = await self.registry.dispatch(call.name, call.arguments, call_ctx)
            ok, output, extra = result.ok, result.output, result.metadata
        self._round.running, self._round.output = None, None
        output = fit_tool_output(output, window=self.settings.num_ctx, name=call.name)
        status = "completed" if ok else "failed"
        self.recorder.update_event(
            event_id, output, {**metadata, **_jsonable(extra), "status": status}
        )
        self._answer(call, output)
        self.recorder.emit(ToolFinished(call.id, call.name, status, output, dict(extra)))
        if stop.is_set():
            # The turn was stopped while this call wrote: the write finished whole and is
            # recorded as done (tools/offload.py); the turn stops here.
            raise asyncio.CancelledError
        return output

    def _finish(self, outcome: Outcome, response: str = "", error: str = "") -> TurnFinished:
        self.recorder.save_messages(self.messages)
        self._round = RoundState()
        badge = {
            Outcome.COMPLETE: Status.READY,
            Outcome.BLOCKED: Status.BLOCKED,
            Outcome.INCOMPLETE: Status.INCOMPLETE,
            Outcome.LOOP_STOPPED: Status.LOOP_STOPPED,
            Outcome.STOPPED: Status.STOPPED,
            Outcome.ERROR: Status.ERROR,
        }[outcome]
        if outcome is Outcome.INCOMPLETE and error:
            self.recorder.event("error", f"Incomplete: {error}")
            self.recorder.emit(ErrorNotice(f"Incomplete: {error}"))
        finished = TurnFinished(outcome, response, error)
        self.recorder.emit(StatusChanged(badge))
        self.recorder.emit(finished)
        return finished


def _jsonable(metadata: dict[str, Any]) -> dict[str, Any]:
    """Tool metadata as plain JSON values, so that saving it can never fail."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, str | int | float | bool) or value is None:
            out[key] = value
        else:
            out[key] = str(value)
    return out
