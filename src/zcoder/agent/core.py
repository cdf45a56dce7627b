"""The turn loop: one common body for turns of every origin.

prepare → request → tools → completion → loop detection → persistence. A turn starts from
the user (``run_user_turn``) or from a relayed task (``run_relay_turn``); both then run
``_run_turn``. Cancellation (the task being cancelled at any await) leaves the history
consistent: a partial reply is kept out of the model history and marked partial in the
transcript, and every tool call of the round gets a result (interrupted, not executed).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from zcoder.agent.compaction import split_history, summary_record, summary_request
from zcoder.agent.events import (
    AgentEvent,
    AssistantDelta,
    AssistantMessage,
    ContextUsage,
    ErrorNotice,
    EventSink,
    Notice,
    Outcome,
    RelayReceived,
    Status,
    StatusChanged,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from zcoder.agent.loops import LoopDetector
from zcoder.agent.prompts import (
    INTERRUPTED,
    LOOP_WARNING,
    NOT_EXECUTED,
    NUDGE_BAD_FINISH,
    NUDGE_EMPTY,
    system_prompt,
)
from zcoder.agent.relay_tools import RELAY_SENDER_KEY, restrict_schemas
from zcoder.agent.relay_wrapper import relay_wrapper
from zcoder.agent.usage import Breakdown, ContextMeter, cut_off_reason, fit_tool_output
from zcoder.config import DEFAULT_COMPACT_AT
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
    tool_result_message,
    user_message,
)
from zcoder.model import ThinkingDelta as ModelThinking
from zcoder.model.recovery import recover
from zcoder.relay import Envelope
from zcoder.sessions import SessionStore, SessionStoreError
from zcoder.tools import (
    FINISH_TOOL_NAME,
    ApprovalPolicy,
    Approver,
    Profile,
    ToolContext,
    ToolRegistry,
    TurnOrigin,
)

log = logging.getLogger(__name__)

MAX_NUDGES: Final = 3
"""Corrective nudges in a row (empty reply, malformed calls, a bad finish) before a turn
ends Incomplete; a well-formed round resets the count."""
RETRY_DELAY_SECONDS: Final = 0.5
"""The pause before the one retry of a request that failed before any response."""


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


@dataclass(frozen=True)
class CompactResult:
    compacted: bool
    text: str
    before: int = 0
    after: int = 0


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


@dataclass
class _RoundState:
    """What a cancellation must tidy up."""

    reply: AssistantReply | None = None
    calls: list[ToolCall] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)
    running: tuple[ToolCall, int | None] | None = None


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
        self.on_event = on_event
        self.store = store
        self.session_id = session_id
        self.relay_available = relay_available
        self.messages: list[Message] = []  # model history, without the system message
        self.user_ledger: list[str] = []  # exactly what the user typed
        self._round = _RoundState()
        self._store_warned = False
        self.meter = ContextMeter()

    # -- sessions -----------------------------------------------------------------------

    def use_session(self, session_id: str, messages: list[Message], ledger: list[str]) -> None:
        self.session_id = session_id
        self.messages = [m for m in messages if m.get("role") != "system"]
        self.user_ledger = list(ledger)
        self.meter.reset()

    def _save(self, action: Callable[[SessionStore, str], Any]) -> Any:
        if self.store is None or self.session_id is None:
            return None
        try:
            return action(self.store, self.session_id)
        except SessionStoreError as exc:
            if not self._store_warned:
                self._store_warned = True
                self._emit(ErrorNotice(f"the session could not be saved: {exc}"))
            log.warning("session not saved: %s", exc)
            return None

    def _save_messages(self) -> None:
        messages = list(self.messages)
        self._save(lambda store, sid: store.replace_messages(sid, messages))

    def _event(self, role: Any, text: str, metadata: dict[str, Any] | None = None) -> int | None:
        result = self._save(lambda store, sid: store.append_event(sid, role, text, metadata or {}))
        return result if isinstance(result, int) else None

    def _update_event(self, event_id: int | None, text: str, metadata: dict[str, Any]) -> None:
        if event_id is None or self.store is None:
            return
        self._save(lambda store, _sid: store.update_event(event_id, text=text, metadata=metadata))

    def record_error(self, text: str, metadata: dict[str, Any] | None = None) -> None:
        """Save an error the front end showed (a quarantined relay message, say)."""
        self._event("error", text, metadata)

    def _emit(self, event: AgentEvent) -> None:
        try:
            self.on_event(event)
        except Exception:  # a front end's bug must not break the turn or its history
            log.exception("event handler failed for %r", event)

    # -- entry points -------------------------------------------------------------------

    async def run_user_turn(self, text: str) -> TurnFinished:
        """A prompt the user typed: it enters the ledger and may title the session."""
        self.user_ledger.append(text)
        self.messages.append(user_message(text))
        self._save(lambda store, sid: store.record_user_message(sid, text))
        self._save_messages()
        return await self._run_turn(TurnOrigin.USER, {})

    async def run_relay_turn(self, envelope: Envelope) -> TurnFinished:
        """A task relayed by another instance: shown, wrapped, never in the ledger or title."""
        self._emit(
            RelayReceived(
                sender_project=envelope.sender_project,
                sender_pid=envelope.sender_pid,
                sender_workspace=envelope.sender_workspace,
                sender_instance_id=envelope.sender_instance_id,
                body=envelope.body,
            )
        )
        self._event(
            "relay",
            envelope.body,
            {
                "sender_project": envelope.sender_project,
                "sender_pid": envelope.sender_pid,
                "sender_workspace": envelope.sender_workspace,
                "sender_instance_id": envelope.sender_instance_id,
                "message_id": envelope.message_id,
            },
        )
        self.messages.append(user_message(relay_wrapper(envelope)))
        self._save_messages()
        if self.approval.revoke_always():
            text = (
                "A relayed task is now part of this conversation, so your earlier `a` "
                "(allow commands) no longer applies: commands ask again until you press "
                "`a` anew."
            )
            self._event("system", text)
            self._emit(Notice(text))
        sender = f"{envelope.sender_project or 'an unnamed project'} (pid {envelope.sender_pid})"
        return await self._run_turn(
            TurnOrigin.RELAY,
            {RELAY_SENDER_KEY: envelope.sender_instance_id},
            requested_by=sender,
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
        )

    def request_messages(self) -> list[Message]:
        """Exactly one system message, first, then the history."""
        prompt = system_prompt(
            self.settings.profile,
            self.settings.workspace,
            instructions=self.settings.instructions,
            relay_available=self.relay_available(),
        )
        return [system_message(prompt), *self.messages]

    def tool_schemas(self, ctx: ToolContext) -> list[dict[str, Any]]:
        return restrict_schemas(self.registry.schemas(ctx), ctx)

    def user_turn_request(self) -> tuple[list[Message], list[dict[str, Any]]]:
        """What the next user turn's first request would send: messages and tool schemas."""
        return self.request_messages(), self.tool_schemas(self._context(TurnOrigin.USER, {}))

    def context_breakdown(self) -> Breakdown:
        """Where the tokens of the next request go (for /context)."""
        _messages, schemas = self.user_turn_request()
        return self.meter.breakdown(
            base_prompt=system_prompt(
                self.settings.profile,
                self.settings.workspace,
                relay_available=self.relay_available(),
            ),
            instructions=self.settings.instructions,
            history=self.messages,
            tools=schemas,
            window=self.settings.num_ctx,
        )

    def usage_now(self) -> ContextUsage:
        """The meter's reading: the last real count, or an estimate of the next request."""
        if self.meter.last is not None and self.meter.last.window == self.settings.num_ctx:
            return self.meter.last
        messages, schemas = self.user_turn_request()
        return self.meter.estimate(messages, schemas, self.settings.num_ctx)

    # -- compaction ---------------------------------------------------------------------

    async def compact(self, focus: str = "", *, automatic: bool = False) -> CompactResult:
        """Replace older history with a summary the model writes; keep the latest turns.

        The transcript (the user's record) is untouched; the model's history is replaced
        and saved, so a resumed session goes on from the summary.
        """
        older, kept = split_history(self.messages)
        if not older:
            return CompactResult(
                False, "nothing to compact yet: the history is only the latest turns"
            )
        messages, schemas = self.user_turn_request()
        before = self.meter.estimate(messages, schemas, self.settings.num_ctx).used
        label = "Compacting the conversation" + (
            " (the context window is nearly full)" if automatic else ""
        )
        self._emit(Notice(f"{label}…"))
        summary = AssistantReply()
        async for event in self.client.chat(
            self.settings.model,
            summary_request(older, focus),
            think=False,
            num_predict=self.settings.num_predict,
            num_ctx=self.settings.num_ctx,
            keep_alive=self.settings.keep_alive,
        ):
            summary.add(event)
        text = summary.content.strip()
        if not text:
            return CompactResult(False, "the model wrote an empty summary; nothing was compacted")
        self.messages = [summary_record(text), *kept]
        self._save_messages()
        self.meter.reset()
        messages, schemas = self.user_turn_request()
        after = self.meter.estimate(messages, schemas, self.settings.num_ctx)
        report = (
            f"Compacted{' automatically' if automatic else ''}: {len(older)} older messages "
            f"became a summary; the latest turns are kept as they were. "
            f"Context ~{before:,} → ~{after.used:,} tokens."
        )
        self._event("system", report, {"compacted": True, "before": before, "after": after.used})
        self._emit(Notice(report))
        self._emit(after)
        return CompactResult(True, report, before, after.used)

    async def _compact_if_needed(
        self, request: list[Message], schemas: list[dict[str, Any]]
    ) -> bool:
        """Compact first when the next request would pass the threshold of the window."""
        window, share = self.settings.num_ctx, self.settings.compact_at
        if not window or share is None or self.meter.last is None:
            return False
        predicted = self.meter.estimate(request, schemas, window).used
        if predicted < window * share:
            return False
        try:
            result = await self.compact(automatic=True)
        except ModelError as exc:
            self._emit(ErrorNotice(f"automatic compaction failed: {exc}"))
            return False
        return result.compacted

    def _add_context(self, text: str) -> None:
        """A user-role record zcoder adds; shown as a notice, kept out of the ledger."""
        self.messages.append(user_message(text))
        self._event("system", text, {"context_record": True})
        self._emit(Notice(text))

    async def _run_turn(
        self, origin: TurnOrigin, extras: dict[str, Any], *, requested_by: str | None = None
    ) -> TurnFinished:
        ctx = self._context(origin, extras, requested_by)
        loops = LoopDetector()
        nudges = 0
        self._round = _RoundState()
        try:
            while True:
                self._emit(StatusChanged(Status.THINKING))
                self._round = _RoundState(reply=AssistantReply())
                request, schemas = self.request_messages(), self.tool_schemas(ctx)
                if await self._compact_if_needed(request, schemas):
                    request = self.request_messages()
                if self.meter.last is None:
                    self._emit(self.meter.estimate(request, schemas, self.settings.num_ctx))
                reply = await self._request(request, schemas)
                # A tool call or reasoning the model wrote as text becomes a real one.
                recovered = recover(reply, schemas)
                if recovered is not reply:
                    if reply.content.strip() and not recovered.content.strip():
                        # All that streamed was a call or reasoning: off the screen.
                        self._emit(AssistantMessage("", streamed=True))
                    reply = recovered
                usage = self.meter.record(reply.done, request, schemas, self.settings.num_ctx)
                if usage is not None:
                    self._emit(usage)
                cut_off = cut_off_reason(
                    reply.done, num_ctx=self.settings.num_ctx, num_predict=self.settings.num_predict
                )
                calls = reply.tool_calls
                if not calls:
                    if reply.content.strip():
                        self.messages.append(assistant_message(reply.content))
                        self._show_assistant(reply.content, partial=cut_off is not None)
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
                    self._show_assistant(reply.content)
                if cut_off is not None:
                    self._event("error", cut_off.capitalize())
                    self._emit(ErrorNotice(cut_off.capitalize()))
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
                        self._event(
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
                        self._emit(ToolFinished(call.id, call.name, "not_executed", refused))
                    self._event("error", "Loop stopped: the same tool round was repeated again.")
                    self._emit(ErrorNotice("Loop stopped: the same tool round was repeated."))
                    return self._finish(
                        Outcome.LOOP_STOPPED, error="the same tool round was repeated"
                    )
                results = []
                for call in calls:
                    results.append(await self._run_call(call, ctx))
                self._save_messages()
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
            self._tidy_after_cancel()
            raise
        except ModelError as exc:
            # Text that streamed before a mid-stream failure was seen: keep it in the
            # transcript as partial, never in the model history.
            partial = self._round.reply
            if partial is not None and partial.content.strip():
                self._show_assistant(partial.content, partial=True)
            self._event("error", str(exc))
            self._emit(ErrorNotice(str(exc)))
            self._save_messages()
            return self._finish(Outcome.ERROR, error=str(exc))

    async def _request(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> AssistantReply:
        """Stream one reply; one retry for a connection error before any response."""
        retried = False
        while True:
            reply = AssistantReply()
            self._round.reply = reply
            received = False
            try:
                async for event in self.client.chat(
                    self.settings.model,
                    messages,
                    tools=tools or None,
                    think=self.settings.think,
                    num_predict=self.settings.num_predict,
                    num_ctx=self.settings.num_ctx,
                    keep_alive=self.settings.keep_alive,
                ):
                    received = True
                    reply.add(event)
                    if isinstance(event, ContentDelta) and event.text:
                        self._emit(AssistantDelta(event.text))
                    elif isinstance(event, ModelThinking) and event.text:
                        self._emit(ThinkingDelta(event.text))
                return reply
            except ModelError as exc:
                if retried:
                    raise
                if exc.retryable_before_response and not received:
                    retried = True
                    self._emit(Notice(f"{exc} — retrying once"))
                    await asyncio.sleep(self.settings.retry_delay)
                    continue
                if isinstance(exc, ModelStreamError):
                    # A malformed or unfinished reply: asked again once, then reported.
                    retried = True
                    if reply.content.strip():
                        self._show_assistant(reply.content, partial=True)
                    self._emit(Notice(f"{exc} — asking again once"))
                    await asyncio.sleep(self.settings.retry_delay)
                    continue
                raise

    def _show_assistant(self, text: str, *, partial: bool = False, streamed: bool = True) -> None:
        self._event("assistant", text, {"partial": True} if partial else {})
        self._emit(AssistantMessage(text, partial=partial, streamed=streamed))

    def _answer(self, call: ToolCall, output: str) -> None:
        self.messages.append(tool_result_message(call, output))
        self._round.answered.add(call.id)

    async def _finish_call(self, call: ToolCall, ctx: ToolContext) -> TurnFinished | None:
        if call.arguments_error:
            self._answer(call, f"Error: {call.arguments_error}")
            return None
        result = await self.registry.dispatch(call.name, call.arguments, ctx)
        self._answer(call, result.output)
        if not result.ok:
            self._emit(Notice(result.output))
            return None
        response = str(call.arguments.get("response", ""))
        status = str(call.arguments.get("status", "complete"))
        if response.strip():
            self._show_assistant(response, streamed=False)
        outcome = Outcome.BLOCKED if status == "blocked" else Outcome.COMPLETE
        return self._finish(outcome, response)

    async def _run_call(self, call: ToolCall, ctx: ToolContext) -> str:
        self._emit(StatusChanged(Status.TOOL, call.name))
        self._emit(ToolStarted(call.id, call.name, dict(call.arguments)))
        metadata: dict[str, Any] = {
            "name": call.name,
            "call_id": call.id,
            "arguments": dict(call.arguments),
            "status": "running",
        }
        event_id = self._event("tool", "", metadata)
        self._round.running = (call, event_id)
        extra: dict[str, Any] = {}
        if call.name == FINISH_TOOL_NAME:
            # finish beside other calls: refused, shown and saved like any failed call.
            ok, output = False, f"Error: {NUDGE_BAD_FINISH}"
        elif call.arguments_error:
            ok, output = False, f"Error: {call.arguments_error}"
        else:
            result = await self.registry.dispatch(call.name, call.arguments, ctx)
            ok, output, extra = result.ok, result.output, result.metadata
        self._round.running = None
        output = fit_tool_output(output, window=self.settings.num_ctx, name=call.name)
        status = "completed" if ok else "failed"
        self._update_event(event_id, output, {**metadata, **_jsonable(extra), "status": status})
        self._answer(call, output)
        self._emit(ToolFinished(call.id, call.name, status, output, dict(extra)))
        return output

    def _finish(self, outcome: Outcome, response: str = "", error: str = "") -> TurnFinished:
        self._save_messages()
        self._round = _RoundState()
        badge = {
            Outcome.COMPLETE: Status.READY,
            Outcome.BLOCKED: Status.BLOCKED,
            Outcome.INCOMPLETE: Status.INCOMPLETE,
            Outcome.LOOP_STOPPED: Status.LOOP_STOPPED,
            Outcome.STOPPED: Status.STOPPED,
            Outcome.ERROR: Status.ERROR,
        }[outcome]
        if outcome is Outcome.INCOMPLETE and error:
            self._event("error", f"Incomplete: {error}")
            self._emit(ErrorNotice(f"Incomplete: {error}"))
        finished = TurnFinished(outcome, response, error)
        self._emit(StatusChanged(badge))
        self._emit(finished)
        return finished

    def _tidy_after_cancel(self) -> None:
        """Leave history consistent after the turn's task was cancelled at any await."""
        state = self._round
        if state.reply is not None and state.reply.content.strip():
            # A partial reply is shown and saved as partial, never sent back to the model.
            self._show_assistant(state.reply.content, partial=True)
        if state.running is not None:
            call, event_id = state.running
            self._update_event(
                event_id,
                INTERRUPTED,
                {
                    "name": call.name,
                    "call_id": call.id,
                    "arguments": dict(call.arguments),
                    "status": "interrupted",
                },
            )
            self._answer(call, INTERRUPTED)
            self._emit(ToolFinished(call.id, call.name, "interrupted", INTERRUPTED))
        for call in state.calls:
            if call.id not in state.answered:
                self._answer(call, NOT_EXECUTED)
                self._event(
                    "tool",
                    NOT_EXECUTED,
                    {
                        "name": call.name,
                        "call_id": call.id,
                        "arguments": dict(call.arguments),
                        "status": "interrupted",
                        "not_executed": True,
                    },
                )
                self._emit(ToolFinished(call.id, call.name, "not_executed", NOT_EXECUTED))
        self._event("system", "Stopped.")
        self._finish(Outcome.STOPPED)


def _jsonable(metadata: dict[str, Any]) -> dict[str, Any]:
    """Tool metadata as plain JSON values, so that saving it can never fail."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, str | int | float | bool) or value is None:
            out[key] = value
        else:
            out[key] = str(value)
    return out
