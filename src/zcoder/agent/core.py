"""The agent: one conversation, its entry points, its history and its context window.

A turn starts from the user (``run_user_turn``), a relayed task (``run_relay_turn``) or
steering left when the last turn ended (``run_steered_turn``); each then runs its rounds
in a TurnLoop (agent/turn_loop.py: request → tools → completion → loop detection →
persistence, steering landed at each safe point). What a turn shows and saves goes
through its Recorder (agent/recorder.py); the context window (the meter, /context's
breakdown, compaction) is its ContextKeeper's (agent/context_keeper.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zcoder.agent.attachments import with_attachments
from zcoder.agent.call_ids import CallIds
from zcoder.agent.context_keeper import CompactResult, ContextKeeper
from zcoder.agent.edits import EditJournal
from zcoder.agent.events import EventSink, Outcome, RelayReceived, TurnFinished, UserCommandFinished
from zcoder.agent.helper_command import HelperHost, run_helper_command
from zcoder.agent.hook_points import HOOK_PREFIX, HookPoints
from zcoder.agent.image_book import ImageBook
from zcoder.agent.peers_note import PeersNote
from zcoder.agent.plan_keeper import PlanKeeper
from zcoder.agent.prompts import system_prompt
from zcoder.agent.recorder import Recorder
from zcoder.agent.relay_tools import RELAY_SENDER_KEY, restrict_schemas
from zcoder.agent.relay_wrapper import relay_event_metadata, relay_wrapper
from zcoder.agent.settings import AgentSettings
from zcoder.agent.status import ContextUsage
from zcoder.agent.steering import Steerable, SteerSource, revoke_for_relayed
from zcoder.agent.task_tool import SUBAGENTS_KEY, Subagents
from zcoder.agent.turn_loop import MAX_NUDGES, TurnLoop, finish_turn
from zcoder.agent.usage import Breakdown, ContextMeter
from zcoder.agent.user_command import run_user_command
from zcoder.hooks import HookEngine
from zcoder.mcp import LateMcp, attach_or_wait
from zcoder.model import Message, system_message, user_message
from zcoder.model.protocol import ChatClient
from zcoder.relay import Envelope, sender_from, sender_name
from zcoder.sessions import SessionStore
from zcoder.tools import ApprovalPolicy, Approver, Mode, ToolContext, ToolRegistry, TurnOrigin
from zcoder.tools.freshness import FreshnessBook
from zcoder.tools.helpers.clis import find_helper
from zcoder.tools.plan_tool import PLAN_KEY

if TYPE_CHECKING:
    from zcoder.mcp.manager import McpManager

__all__ = ["MAX_NUDGES", "Agent", "AgentSettings", "ChatClient"]


@dataclasses.dataclass(eq=False, kw_only=True)
class Agent(Steerable):
    """One conversation's agent, built from keywords: the collaborators it keeps, and
    ``on_event``, ``store``, ``session_id`` and ``hooks`` (the user's HookEngine, kept as
    ``hook_points``), which only build its Recorder and HookPoints."""

    client: ChatClient
    registry: ToolRegistry
    settings: AgentSettings
    approval: ApprovalPolicy
    approver: Approver
    on_event: dataclasses.InitVar[EventSink]
    store: dataclasses.InitVar[SessionStore | None] = None
    session_id: dataclasses.InitVar[str | None] = None
    relay_available: Callable[[], bool] = lambda: False
    hooks: dataclasses.InitVar[HookEngine | None] = None
    steering: SteerSource | None = None
    """What the front end holds for the running turn, taken at each safe point."""

    def __post_init__(
        self,
        on_event: EventSink,
        store: SessionStore | None,
        session_id: str | None,
        hooks: HookEngine | None,
    ) -> None:
        self.recorder = Recorder(on_event, store, session_id)
        # The user's hooks (zcoder.hooks) and what their answers do (agent/hook_points.py).
        self.hook_points = HookPoints(hooks, self.recorder)
        self.subagents = Subagents(self)  # the task tool's (agent/task_tool.py)
        if hooks is not None and session_id is not None:
            hooks.session_id = session_id
        self.messages: list[Message] = []  # model history, without the system message
        self.user_ledger: list[str] = []  # exactly what the user typed
        # Every tool call gets an id unused in its session (agent/call_ids.py).
        self.call_ids = CallIds()
        # Models whose chat template was checked for tool support (warned once each).
        self.templates_checked: set[str] = set()
        # The model's plan (update_plan), saved with the session (agent/plan_keeper.py).
        self.plan = PlanKeeper(self.recorder)
        self.keeper = ContextKeeper(self)
        # Every file the tools change, by turn, for /diff and /undo (agent/edits.py).
        self.edits = EditJournal(
            self.settings.workspace,
            home=store.home if store is not None else None,
            policy=self.approval.edits,
        )
        self.edits.ledger_size = lambda: len(self.user_ledger)  # for /rewind
        # The images the user attached: the model's vision, their bytes, which requests
        # carry them (agent/image_book.py).
        self.images = ImageBook(
            self.client,
            self.settings,
            store.home if store is not None else None,
            lambda: len(self.user_ledger),
        )
        self.edits.use_session(session_id)
        # What each file held when the agent last read or wrote it: edits over changes it
        # has not seen are refused (tools/freshness.py).
        self.freshness = FreshnessBook()
        # Other live instances in this workspace or one around it ("" when none); kept
        # current by the front end (tui/parts/relay_ui.py). The model is told of a change by a
        # note at the end of its history before its next turn (prompts.peers_note).
        self.workspace_peers = ""
        self._peers = PeersNote()
        # What was said of the instruction files cut or not read (once each, at a turn).
        self.instruction_notices: set[str] = set()
        # The MCP servers' tools join the registry (zcoder.mcp); None when none is set up,
        # and then taken when a file first names one (LateMcp, mcp_now).
        self.mcp: McpManager | None = None
        self._late_mcp: LateMcp | None = None
        if (home := self.settings.mcp_home) is not None:
            self.mcp, self._late_mcp = attach_or_wait(
                self.registry,
                self.settings.workspace,
                home,
                lambda: self.settings.num_ctx,
                self._mcp_attached,
                limits=self.settings.mcp_limits,
            )

    def _mcp_attached(self, manager: McpManager) -> None:
        self.mcp = manager

    @property
    def hook_engine(self) -> HookEngine | None:
        """The user's hooks (their PreToolUse runs around a subagent's calls too)."""
        return self.hook_points.engine

    def mcp_now(self) -> McpManager | None:
        """The MCP servers; with none configured at start, the files are looked at again."""
        if self.mcp is None and self._late_mcp is not None:
            self._late_mcp.attach_if_configured()
        return self.mcp

    # -- sessions -----------------------------------------------------------------------

    def use_session(
        self,
        session_id: str,
        messages: list[Message],
        ledger: list[str],
        state: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """Go on with a session: its history, its ledger and ``state``, what it keeps
        besides (SessionData.state: its plan)."""
        self.recorder.session_id = session_id
        if self.hook_points.engine is not None:
            self.hook_points.engine.session_id = session_id
        self.edits.use_session(session_id)
        self.call_ids = CallIds()
        self.take_history(messages, ledger)
        self.plan.load(state or {})

    def take_history(self, messages: list[Message], ledger: list[str]) -> None:
        """Go on from ``messages`` and ``ledger`` (a session opened, a /rewind)."""
        self.freshness.forget()  # the model read nothing of this history in this process yet
        self.messages = [m for m in messages if m.get("role") != "system"]
        self.registry.use_history(self.messages)  # the tools it loaded (tools/catalog.py)
        self.call_ids.remember(self.messages)
        self.user_ledger = list(ledger)
        self.keeper.meter.reset()

    def record_error(self, text: str, metadata: dict[str, Any] | None = None) -> None:
        """Save an error the front end showed (a quarantined relay message, say)."""
        self.recorder.event("error", text, metadata)

    # -- entry points -------------------------------------------------------------------

    async def session_started(self, source: str) -> None:
        """A session opened (``startup``, ``resume``, ``clear``, ``compact``): what the
        SessionStart hooks say joins the history as context."""
        context = await self.hook_points.session_started(source)
        if context:
            self.messages.append(user_message(f"{HOOK_PREFIX} {context}"))
            self.recorder.save_messages(self.messages)

    async def _session_context(self) -> None:
        """What SessionStart hooks begun when the session opened say (hook_points.py), and
        what of the instruction files was cut or not read, for this window (once each)."""
        for notice in self.settings.instruction_set.notices(self.settings.num_ctx):
            if notice not in self.instruction_notices:
                self.instruction_notices.add(notice)
                self.recorder.notice(notice)
        if context := await self.hook_points.started():
            self.messages.append(user_message(f"{HOOK_PREFIX} {context}"))

    async def run_user_turn(self, text: str) -> TurnFinished:
        """A prompt the user typed: it enters the ledger and may title the session."""
        await self._session_context()
        blocked, context = await self.hook_points.prompt(text)
        if blocked is not None:
            shown = f"A hook stopped this prompt before the model saw it: {blocked}"
            self.recorder.error(shown)
            return finish_turn(self.recorder, self.messages, Outcome.BLOCKED, error=blocked)
        self._peers.tell(self.messages, self.workspace_peers)
        self.user_ledger.append(text)
        sent = await with_attachments(
            text,
            self.settings.workspace,
            window=self.settings.num_ctx,
            recorder=self.recorder,
            seen=self.freshness,
            images=self.images,
        )
        self.messages.append(sent)
        if context:
            self.messages.append(user_message(f"{HOOK_PREFIX} {context}"))
        self.recorder.save(lambda store, sid: store.record_user_message(sid, text))
        self.recorder.save_messages(self.messages)
        return await self._run_turn(TurnOrigin.USER, {}, label=text)

    async def run_user_command(self, command: str) -> UserCommandFinished:
        """``!command``: run it without approval and add it to the conversation as
        context, without a turn (zcoder.agent.user_command)."""
        return await run_user_command(
            command, settings=self.settings, messages=self.messages, recorder=self.recorder
        )

    async def run_helper(self, name: str, task: str, *, timeout: float) -> UserCommandFinished:
        """``/claude TASK`` and its kin: another coding agent on ``task``, asked first,
        recorded as context without a turn (zcoder.agent.helper_command)."""
        ctx = self._context(TurnOrigin.USER, {})
        host = HelperHost(self.settings, self.messages, self.recorder, self.edits, ctx)
        return await run_helper_command(host, find_helper(name), task, timeout=timeout)

    async def run_relay_turn(self, envelope: Envelope, *, trusted: bool = False) -> TurnFinished:
        """A task relayed by another instance: shown, wrapped, never in the ledger or title.

        ``trusted``: its sender is one the user trusts (``/agents trust``; the front end asks
        the relay, zcoder.relay.Relay.trusts_sender); otherwise each edit is asked about
        (ZCODER_RELAY_EDITS, zcoder.tools.approval)."""
        await self._session_context()
        self.recorder.emit(RelayReceived.from_envelope(envelope))
        self.recorder.event("relay", envelope.body, relay_event_metadata(envelope))
        self._peers.tell(self.messages, self.workspace_peers)
        self.messages.append(user_message(relay_wrapper(envelope)))
        self.recorder.save_messages(self.messages)
        revoke_for_relayed(self.approval, self.recorder, "A relayed task")
        return await self._run_turn(
            TurnOrigin.RELAY,
            {RELAY_SENDER_KEY: envelope.sender_instance_id},
            requested_by=sender_from(envelope),
            label=f"relayed from {sender_name(envelope)}",
            sender_trusted=trusted,
        )

    # -- the common body ----------------------------------------------------------------

    def _context(
        self,
        origin: TurnOrigin,
        extras: dict[str, Any],
        requested_by: str | None = None,
        *,
        sender_trusted: bool = False,
    ) -> ToolContext:
        return ToolContext(
            workspace=self.settings.workspace,
            profile=self.settings.profile,
            origin=origin,
            approval=self.approval,
            approver=self.approver,
            max_output=self.settings.max_tool_output,
            extras={PLAN_KEY: self.plan, SUBAGENTS_KEY: self.subagents, **extras},
            requested_by=requested_by,
            sender_trusted=sender_trusted,
            edits=self.edits,
            freshness=self.freshness,
        )

    def request_messages(self) -> list[Message]:
        """Exactly one system message, first, then the history."""
        prompt = system_prompt(
            self.settings.profile,
            self.settings.workspace,
            instructions=self.settings.instructions_text(),
            relay_available=self.relay_available(),
            skills=self.settings.skills_catalog,
            planning=self.approval.mode is Mode.PLAN,
        )
        return [system_message(prompt), *self.images.wire(self.messages)]

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
        """Where the tokens of the next request go (for /context), with the output limit
        and the share of the window that compacts by itself."""
        return dataclasses.replace(
            self.keeper.breakdown(),
            max_output=self.settings.num_predict,
            compact_at=self.settings.compact_at,
        )

    def usage_now(self) -> ContextUsage:
        """The meter's reading: the last real count, or an estimate of the next request."""
        return self.keeper.usage_now()

    async def compact(self, focus: str = "", *, automatic: bool = False) -> CompactResult:
        """Replace older history with a summary the model writes; keep the latest turns."""
        return await self.keeper.compact(focus, automatic=automatic)

    def record_receipt(self, record: str, shown: str, metadata: dict[str, Any]) -> None:
        """A receipt (or a progress notice) for a task this instance sent: context for the
        model (``record``, relay_wrapper.receipt_record), shown as ``shown``; no turn."""
        self.messages.append(user_message(record))
        self.recorder.save_messages(self.messages)
        self.recorder.event("receipt", shown, metadata)

    def note_for_model(self, text: str, shown: str) -> None:
        """Something the user did between turns (an /undo, say): ``text`` enters the
        model history as a user-role record, ``shown`` is the transcript's notice; both
        are saved at once."""
        self.messages.append(user_message(text))
        self.recorder.notice(shown)
        self.recorder.save_messages(self.messages)

    async def _run_turn(
        self,
        origin: TurnOrigin,
        extras: dict[str, Any],
        *,
        requested_by: str | None = None,
        label: str = "",
        sender_trusted: bool = False,
        token_limit: int | None = None,
    ) -> TurnFinished:
        ctx = self._context(origin, extras, requested_by, sender_trusted=sender_trusted)
        self.edits.begin_turn(label)
        await self.images.prepare(self.messages)
        return await TurnLoop(self, ctx, token_limit=token_limit).run()

    async def run_goal_turn(self, record: str, *, token_limit: int) -> TurnFinished:
        """A turn toward the user's goal (``/goal``): ``record`` (agent/goal.py's
        worker_record) joins the history as a user-role record, out of the ledger (the
        user typed the /goal, not this); it ends at the first safe point after its
        requests cost ``token_limit`` tokens (the goal's budget left)."""
        await self._session_context()
        self._peers.tell(self.messages, self.workspace_peers)
        self.messages.append(user_message(record))
        self.recorder.save_messages(self.messages)
        return await self._run_turn(TurnOrigin.USER, {}, label="goal", token_limit=token_limit)

    async def run_steered_turn(self) -> TurnFinished:
        """The steering left when the last turn ended before a safe point (its reply had
        no tool calls): a turn of its own, landed as steering first."""
        await self._session_context()
        self._peers.tell(self.messages, self.workspace_peers)
        return await self._run_turn(TurnOrigin.USER, {}, label="steering")
