"""The interactive zcoder: a Textual app around one Agent, one session store and the relay.

The agent runs in a worker on the app's event loop; the UI never blocks on it. The relay's
listener thread only nudges the app (``RelayNudge``, tui/relay_ui.py); the app alone claims
queued messages, one at a time, when idle. A prompt submitted while a turn runs is queued;
the TurnScheduler (tui/scheduler.py) orders the user's prompts and relayed tasks and holds
relayed tasks back once too many ran without the user.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, ListView
from textual.worker import Worker, WorkerState

from zcoder import __version__
from zcoder.agent import (
    Agent,
    AgentSettings,
    Status,
    load_instructions,
    register_relay_tools,
    render_instructions,
)
from zcoder.agent.usage import render_breakdown
from zcoder.config import Config
from zcoder.model import ModelError, make_client, server_label
from zcoder.model.context import (
    ContextWindow,
    WindowProbe,
    allocation_notice,
    resolve_for_model,
)
from zcoder.relay import ClaimedMessage, QuarantinedMessage, Relay
from zcoder.sessions import SessionStore, SessionStoreError
from zcoder.tools import (
    ApprovalPolicy,
    default_registry,
)
from zcoder.tui.agent_view import AgentView
from zcoder.tui.approvals import DialogApprovals
from zcoder.tui.commands import help_text, parse_slash
from zcoder.tui.queued import QueuedPrompts
from zcoder.tui.relay_ui import RELAY_POLL_SECONDS, RelayNudge, RelayUI
from zcoder.tui.scheduler import Next, TurnScheduler
from zcoder.tui.screens import ModelPicker
from zcoder.tui.widgets import (
    Entry,
    HeaderBar,
    HeaderState,
    PromptInput,
    SessionItem,
    SessionList,
    Transcript,
    entry_for_event,
    error_text,
    system_text,
    user_text,
)

log = logging.getLogger(__name__)

__all__ = ["RELAY_POLL_SECONDS", "WARMUP_NUM_PREDICT", "ZcoderApp", "git_branch", "run_app"]

WARMUP_NUM_PREDICT = 1
"""Tokens the warm-up generates: num_predict is no reason for Ollama to reload."""


def git_branch(workspace: Path) -> str | None:
    """The checked-out branch, read from .git/HEAD (no git process at start-up)."""
    for directory in (workspace, *workspace.parents):
        head = directory / ".git" / "HEAD"
        try:
            text = head.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if text.startswith("ref: refs/heads/"):
            return text.removeprefix("ref: refs/heads/")
        return text[:10] or None
    return None


class ZcoderApp(App[int]):
    TITLE = "zcoder"
    CSS = """
    Screen { layout: vertical; }
    #body { height: 1fr; }
    #main { width: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "stop_turn", "Stop", show=True),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+o", "pick_model", "Model"),
        Binding("ctrl+b", "toggle_sidebar", "Sessions"),
        Binding("f2", "continue_relay", "Run waiting relayed tasks"),  # only while they wait
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(self, config: Config, *, resume: str | None = None) -> None:
        super().__init__()
        self.config = config
        self.resume = resume
        self.model = config.model
        self.store: SessionStore | None = None
        self.session_id: str | None = None
        self.relay_ui = RelayUI(self)
        self.client = make_client(config)  # Ollama, or an OpenAI-compatible server
        self.agent: Agent | None = None
        self._turn: Worker[Any] | None = None
        self._warmup: Worker[Any] | None = None
        self.context_window: ContextWindow | None = None  # resolved per model, in the background
        self._window_task: asyncio.Task[ContextWindow] | None = None
        self._allocation_checked: set[tuple[str, int]] = set()
        self._warned: set[str] = set()
        self.scheduler = TurnScheduler(config.relay.max_auto_turns)
        self._deferred: list[Entry] | None = []
        self.header_state = HeaderState(
            version=__version__,
            model=config.model,
            host=server_label(config),
            project=config.workspace.name or str(config.workspace),
            branch=git_branch(config.workspace),
            profile=config.profile.value,
        )
        self.header = HeaderBar(self.header_state)
        self.sidebar = SessionList(id="sessions")
        self.transcript = Transcript(id="transcript")
        self.prompt_input = PromptInput(id="prompt", soft_wrap=True, show_line_numbers=False)
        self.queued_prompts = QueuedPrompts(id="queued")
        self.agent_view = AgentView(
            self.show,
            lambda status: self.header.refresh_state(status=status),
            lambda usage: self.header.refresh_state(context=usage),
        )
        self.dialogs = DialogApprovals(
            self,
            error=self.error,
            # A key typed while a dialog was not yet armed was meant for the prompt.
            give_back=self.prompt_input.insert,
            user_acted=self.note_user_acted,
        )

    # -- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The app keeps its own references: a query would search whichever screen is on
        # top (a dialog, say) and miss these.
        yield self.header
        with Horizontal(id="body"):
            yield self.sidebar
            with Vertical(id="main"):
                yield self.transcript
                yield self.queued_prompts
                yield self.prompt_input
        yield Footer()

    @property
    def relay(self) -> Relay | None:
        return self.relay_ui.relay

    @property
    def busy(self) -> bool:
        return self._turn is not None and self._turn.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    def show(self, entry: Entry) -> Entry:
        if self._deferred is not None:
            self._deferred.append(entry)  # start-up: shown after the session's transcript
            return entry
        return self.transcript.add(entry)

    def notice(self, text: str) -> None:
        self.show(Entry("system", system_text(text)))

    def error(self, text: str) -> None:
        self.show(Entry("error", error_text(text)))

    # -- start and stop -----------------------------------------------------------------

    def on_mount(self) -> None:
        self._open_store()
        self.relay_ui.start()
        registry = default_registry()
        if self.relay is not None and self.relay.available:
            register_relay_tools(registry, self.relay, self.dialogs)
        self.agent = Agent(
            client=self.client,
            registry=registry,
            settings=AgentSettings(
                model=self.model,
                workspace=self.config.workspace,
                profile=self.config.profile,
                think=self.config.think,
                num_predict=self.config.max_output_tokens,
                keep_alive=self.config.keep_alive,
                compact_at=self.config.compact_at,
                max_tool_output=self.config.max_tool_output,
                instructions=render_instructions(
                    load_instructions(self.config.workspace, self.config.home)
                ),
            ),
            approval=ApprovalPolicy(self.config.command_policy, self.config.profile),
            approver=self.dialogs,
            on_event=self.agent_view.on_event,
            store=self.store,
            relay_available=lambda: self.relay is not None and self.relay.available,
        )
        startup, self._deferred = self._deferred or [], None
        self._open_initial_session()
        self.refresh_meter()
        for entry in startup:
            self.show(entry)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self.exit, 128 + signum)
        self.set_interval(RELAY_POLL_SECONDS, self.relay_ui.poll)
        self.relay_ui.refresh_header()
        self.prompt_input.focus()
        self._start_warmup()

    def _open_store(self) -> None:
        try:
            self.store = SessionStore(self.config.home)
        except SessionStoreError as exc:
            self.store = None
            self.error(f"{exc} — this session will not be saved")
            return
        for warning in self.store.warnings:
            self.notice(warning)

    def _open_initial_session(self) -> None:
        assert self.agent is not None
        if self.store is None:
            self.session_id = None
            return
        workspace, profile = str(self.config.workspace), self.config.profile.value
        try:
            if self.resume:
                self._load_session(self.resume)
                return
            info = self.store.reuse_or_create(workspace, profile, self.model)
        except LookupError:
            self.error(
                f"no session {self.resume!r} in this workspace and profile; started a new one"
            )
            info = self.store.reuse_or_create(workspace, profile, self.model)
        except SessionStoreError as exc:
            self.error(str(exc))
            return
        self._load_session(info.id)

    def _load_session(self, session_id: str) -> None:
        assert self.agent is not None and self.store is not None
        data = self.store.load(session_id, str(self.config.workspace), self.config.profile.value)
        self.session_id = data.info.id
        self.agent.use_session(data.info.id, data.messages, data.user_ledger)
        self.transcript.clear()
        self.agent_view.reset()
        for event in data.events:
            self.show(entry_for_event(event.role, event.text, event.metadata))
        if self.relay is not None:
            self.relay.refresh_manifest(session_id=data.info.id)
        self._refresh_sessions()
        self.refresh_meter()

    def refresh_meter(self) -> None:
        """The header's context meter: the last real count, or an estimate before one."""
        if self.agent is not None:
            self.header.refresh_state(context=self.agent.usage_now())

    def _refresh_sessions(self) -> None:
        if self.store is None:
            return
        try:
            sessions = self.store.list_sessions(
                str(self.config.workspace), self.config.profile.value
            )
        except SessionStoreError as exc:
            self.error(str(exc))
            return
        self.sidebar.show(sessions, self.session_id)

    def on_unmount(self) -> None:
        self._stop_services()

    def _stop_services(self) -> None:
        self.relay_ui.stop()
        if self.store is not None:
            self.store.close()

    # -- turns: the user's prompt and relayed tasks, one at a time ----------------------

    def on_relay_nudge(self, _message: RelayNudge) -> None:
        self.relay_ui.refresh_header()
        self.schedule()

    def schedule(self) -> None:
        """When idle, start the next turn the scheduler names: a relayed task or a prompt."""
        if self.busy or self.agent is None:
            return
        while True:
            oldest = self.relay_ui.oldest_waiting()
            step = self.scheduler.next_turn(oldest)
            if step is Next.RELAY:
                claimed = self.relay.claim_one() if self.relay is not None else None
                if isinstance(claimed, QuarantinedMessage):
                    self.relay_ui.report_quarantined(claimed)
                    continue
                if claimed is not None:
                    self.scheduler.relay_started()
                    self._start_turn(self._relay_turn(claimed), relay=True)
                    return
                step = self.scheduler.next_turn(None)
            if step is Next.PROMPT:
                prompt = self.scheduler.pop_prompt()
                self._show_queue()
                self.show(Entry("user", user_text(prompt)))  # in the transcript as it starts
                self._start_turn(self._user_turn(prompt), relay=False)
            else:
                self.relay_ui.announce_waiting(oldest)
            return

    def note_user_acted(self) -> None:
        """The local user acted (a prompt, a dialog's answer, /agents continue): relayed
        tasks may run again without them, up to ZCODER_RELAY_MAX_AUTO_TURNS."""
        self.scheduler.note_user_acted()
        self.relay_ui.refresh_header()
        self.schedule()

    def _show_queue(self) -> None:
        self.queued_prompts.show_queue(self.scheduler.prompts(), editing=self.scheduler.editing())

    def _start_turn(self, coroutine: Any, *, relay: bool) -> None:
        if self._warmup is not None and self._warmup.state is WorkerState.RUNNING:
            self._warmup.cancel()  # a real request supersedes the warm-up
        if self.relay is not None:
            self.relay.set_state("busy")
        self._turn = self.run_worker(coroutine, group="turn", exit_on_error=False)

    async def _user_turn(self, prompt: str) -> None:
        assert self.agent is not None
        await self._window_ready()  # num_ctx goes with every request, the first one too
        await self.agent.run_user_turn(prompt)
        self._check_allocation()
        self._refresh_sessions()

    async def _relay_turn(self, claimed: ClaimedMessage) -> None:
        assert self.agent is not None and self.relay is not None
        try:
            await self._window_ready()
            await self.agent.run_relay_turn(claimed.envelope)
            self._check_allocation()
        finally:
            # Completed whatever happened: a claimed message never runs twice.
            self.relay.complete(claimed)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._warmup and event.state in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            if event.state is WorkerState.ERROR and event.worker.error is not None:
                self.error(str(event.worker.error))
                self.header.refresh_state(status=Status.ERROR.value)
            elif not self.busy and event.state is WorkerState.SUCCESS:
                self.header.refresh_state(status=Status.READY.value)
            return
        if event.worker is not self._turn or event.state not in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            return
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            log.error("turn failed", exc_info=event.worker.error)
            self.error(f"the turn failed unexpectedly: {event.worker.error!r}")
        self._turn = None
        if self.relay is not None:
            self.relay.set_state("ready")
        self.relay_ui.refresh_header()
        self.schedule()

    # -- warm-up ------------------------------------------------------------------------

    def _start_warmup(self) -> None:
        """Size the context window for the current model, then load the model with it."""
        if self._warmup is not None and self._warmup.state is WorkerState.RUNNING:
            self._warmup.cancel()
        self._resolve_window()
        self.header.refresh_state(status=Status.WARMING_UP.value)
        self._warmup = self.run_worker(self._warm(), group="warmup", exit_on_error=False)

    def _resolve_window(self) -> None:
        """Start sizing the window for this model (zcoder.model.context), in the background."""
        self._window_task = asyncio.get_running_loop().create_task(self._resolve(self.model))

    async def _resolve(self, model: str) -> ContextWindow:
        window = await resolve_for_model(
            model, explicit=self.config.context_window, home=self.config.home, probe=self.client
        )
        for warning in window.warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self.notice(warning)
        if model == self.model:
            self.context_window = window
            if self.agent is not None:
                self.agent.settings.num_ctx = window.tokens
            self.refresh_meter()
        return window

    async def _window_ready(self) -> ContextWindow:
        """The window of the current model, once sized (shielded: a stopped turn or
        warm-up does not stop the sizing the next one needs)."""
        if self._window_task is None:
            self._resolve_window()
        assert self._window_task is not None
        return await asyncio.shield(self._window_task)

    async def _warm(self) -> None:
        """Load the model exactly as the first turn will use it, so nothing reloads.

        The request is the start of a user turn's: its system message and tool schemas,
        with the same num_ctx, think and keep_alive. Ollama reloads a loaded model only
        when a runner option (num_ctx, num_batch, num_gpu, ...) differs, never for
        num_predict, so one generated token is enough; Ollama keeps the evaluated prefix
        in its cache and the first turn reuses it. Nothing enters history.
        """
        await self._window_ready()
        assert self.agent is not None
        messages, tools = self.agent.user_turn_request()
        settings = self.agent.settings
        async for _event in self.client.chat(
            self.model,
            messages[:1],
            tools=tools or None,
            think=settings.think,
            num_predict=WARMUP_NUM_PREDICT,
            num_ctx=settings.num_ctx,
            keep_alive=settings.keep_alive,
        ):
            pass
        self._check_allocation()

    def _check_allocation(self) -> None:
        """Once per model and window, in the background: does Ollama report the window
        it was asked for? If not, say so (zcoder.model.context.allocation_notice)."""
        window, model = self.context_window, self.model
        if window is None or not isinstance(self.client, WindowProbe):
            return
        if (model, window.tokens) in self._allocation_checked:
            return
        self._allocation_checked.add((model, window.tokens))
        self.run_worker(
            self._report_allocation(self.client, model, window),
            group="allocation",
            exit_on_error=False,
        )

    async def _report_allocation(
        self, probe: WindowProbe, model: str, window: ContextWindow
    ) -> None:
        try:
            allocated = await probe.loaded_context_length(model)
        except ModelError as exc:
            log.info("could not read Ollama's allocation for %s: %s", model, exc)
            return
        notice = allocation_notice(model, window, allocated)
        if notice is not None and model == self.model:
            self.notice(notice)

    # -- input --------------------------------------------------------------------------

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text
        if not text.strip():
            return
        command = parse_slash(text)
        if command is not None:
            self.prompt_input.clear()
            self.show(Entry("system", system_text(f"› {text.strip()}")))
            self.run_worker(self._run_command(command.name, command.argument), group="command")
            return
        self.prompt_input.clear()
        marks = self.relay_ui.sequences()
        self.scheduler.queue_prompt(
            text, last_accepted=marks.last_accepted, oldest_waiting=self.relay_ui.oldest_waiting()
        )
        self.note_user_acted()  # starts it at once when nothing runs
        self._show_queue()

    def on_prompt_input_edit_queued(self, _message: PromptInput.EditQueued) -> None:
        text = self.scheduler.take_last()
        if text is not None:
            self.prompt_input.load_text(text)
            self.prompt_input.move_cursor(self.prompt_input.document.end)
            self._show_queue()

    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        # A queued prompt taken back to edit is cancelled when the input is cleared.
        empty = event.text_area is self.prompt_input and not self.prompt_input.text.strip()
        if empty and self.scheduler.drop_recalled():
            self._show_queue()

    async def _run_command(self, name: str, argument: str) -> None:
        if name == "/help":
            self.notice(help_text())
        elif name == "/quit":
            self.exit(0)
        elif name == "/new":
            self.action_new_session()
        elif name == "/sessions":
            sidebar = self.sidebar
            sidebar.display = True
            self._refresh_sessions()
            sidebar.focus()
        elif name == "/model":
            if argument:
                self._set_model(argument)
            else:
                await self._pick_model()
        elif name == "/context":
            self._show_context()
        elif name == "/compact":
            self._compact(argument)
        elif name == "/list-agents":
            await self.relay_ui.list_agents()
        elif name == "/agents":
            self.relay_ui.agents_command(argument)
        else:
            self.error(f"unknown command {name}; /help lists the commands")

    def _show_context(self) -> None:
        if self.agent is None:
            return
        self.notice(render_breakdown(self.agent.context_breakdown(), self.window_source()))
        self.refresh_meter()

    def window_source(self) -> str | None:
        """Where the context window's size came from, for /context."""
        return self.context_window.source if self.context_window is not None else None

    def _compact(self, focus: str) -> None:
        if self.agent is None:
            return
        if self.busy:
            self.notice("/compact runs when no turn is running; try again when this one ends.")
            return
        self._start_turn(self._compact_turn(focus), relay=False)

    async def _compact_turn(self, focus: str) -> None:
        assert self.agent is not None
        await self._window_ready()  # the summary request is sized like every other
        self.header.refresh_state(status="Compacting")
        try:
            result = await self.agent.compact(focus)
        except ModelError as exc:
            self.error(f"compaction failed, nothing was changed: {exc}")
            self.header.refresh_state(status="Error")
            return
        if not result.compacted:
            self.notice(f"Nothing compacted: {result.text}.")
        self.header.refresh_state(status="Ready")
        self.refresh_meter()

    # -- actions ------------------------------------------------------------------------

    def action_stop_turn(self) -> None:
        if self._turn is not None and self.busy:
            self._turn.cancel()
            if queued := len(self.scheduler.prompts()):
                self.notice(
                    f"Stopped. Your {queued} queued prompt{'s stay' if queued > 1 else ' stays'}"
                    " queued and will run; ↑ in the empty prompt takes the last one back."
                )

    def action_continue_relay(self) -> None:
        self.relay_ui.agents_command("continue")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "continue_relay":
            return self.header_state.waiting  # the key is shown only while tasks wait
        return True

    def action_toggle_sidebar(self) -> None:
        sidebar = self.sidebar
        sidebar.display = not sidebar.display

    def action_new_session(self) -> None:
        if self.busy:
            self.notice("Switching sessions is possible when no turn is running.")
            return
        if self.store is None:
            self.error("sessions are unavailable in this run")
            return
        info = self.store.reuse_or_create(
            str(self.config.workspace), self.config.profile.value, self.model
        )
        if info.id == self.session_id:
            self.notice("This session is already new.")
            return
        self._load_session(info.id)
        self.notice("New session.")

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        item = event.item
        if not isinstance(item, SessionItem) or item.info.id == self.session_id:
            return
        if self.busy:
            self.notice("Switching sessions is possible when no turn is running.")
            return
        self._load_session(item.info.id)
        self.prompt_input.focus()

    async def action_pick_model(self) -> None:
        await self._pick_model()

    async def _pick_model(self) -> None:
        if self.busy:
            self.notice("The model can be changed when no turn is running.")
            return
        try:
            models = await self.client.list_models()
        except ModelError as exc:
            self.error(str(exc))
            return
        if not models:
            if self.config.backend == "openai":
                self.notice(f"The server at {self.config.base_url} lists no models; load one.")
            else:
                self.notice("Ollama has no models; pull one with `ollama pull NAME`.")
            return
        self.push_screen(ModelPicker(models, self.model), callback=self._model_chosen)

    def _model_chosen(self, model: str | None) -> None:
        if model:
            self._set_model(model)

    def _set_model(self, model: str) -> None:
        if self.busy:
            self.notice("The model can be changed when no turn is running.")
            return
        self.model = model
        if self.agent is not None:
            self.agent.settings.model = model
        if self.store is not None and self.session_id is not None:
            with contextlib.suppress(SessionStoreError):
                self.store.set_model(self.session_id, model)
        if self.relay is not None:
            self.relay.refresh_manifest(model=model)
        self.header.refresh_state(model=model)
        self.notice(f"Model: {model}")
        self._start_warmup()


def run_app(config: Config, *, resume: str | None = None) -> int:
    app = ZcoderApp(config, resume=resume)
    try:
        code = app.run()
    finally:
        app._stop_services()  # idempotent: also covers an exit that skipped unmount
    if os.environ.get("ZCODER_DEBUG_EXIT"):
        print(f"zcoder exited with {code}")
    return int(code or 0)
