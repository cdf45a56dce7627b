"""The main screen: it composes the header, the sessions list and the chat pane, makes the
parts behind them, and routes what they say.

Calls go down, messages come up. The screen calls its widgets (the header's fields, the
chat pane's turn) and its parts (tui/parts/model_ui.py, sessions_ui.py, relay_ui.py, turns.py,
slash.py, quit_ui.py, ...); the parts never call the screen back: they post messages
(tui/messages.py) and the handlers here put each where it belongs. A part that runs
workers or shows dialogs gets the screen as its ``Host`` (tui/parts/services.py): its workers
are the screen's. The app (tui/app.py) owns the services and quitting; its key bindings
land here.

The parts are made when first used: the first frame needs none of them, and they import
the agent, the model client, the relay and the session store (tui/parts/startup.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, ListView
from textual.worker import Worker, WorkerState

from zcoder import __version__
from zcoder.agent.status import Status
from zcoder.model.backends import server_label
from zcoder.slash.registry import commands
from zcoder.tools.jobs import job_table
from zcoder.tui.messages import (
    ModelChanged,
    PromptFocused,
    RelayNudge,
    RunNext,
    Say,
    SessionOpened,
    TurnStarted,
)
from zcoder.tui.parts.commands import parse_slash, parse_user_command
from zcoder.tui.parts.services import ScreenHost
from zcoder.tui.parts.startup import Startup
from zcoder.tui.parts.wiring import Parts
from zcoder.tui.state.double_escape import REWIND_AGAIN_TEXT, DoubleEscape
from zcoder.tui.state.terminal_title import TerminalTitle
from zcoder.tui.widgets.chat_pane import ChatPane
from zcoder.tui.widgets.plan_view import PlanView
from zcoder.tui.widgets.prompt import PromptInput
from zcoder.tui.widgets.shared import (
    Body,
    SessionItem,
    SessionList,
    SidebarPlaceholder,
    SideColumn,
)
from zcoder.tui.widgets.status import HeaderBar, HeaderState, git_branch, turn_summary
from zcoder.tui.widgets.subagent_entry import SubagentEntry
from zcoder.tui.widgets.task_view import TaskView
from zcoder.tui.widgets.transcript import CommandEntry, Entry, ToolEntry, Transcript, system_text

if TYPE_CHECKING:
    from zcoder.tui.parts.services import Services

log = logging.getLogger(__name__)

__all__ = ["MainScreen"]


class MainScreen(ScreenHost, Screen[None]):
    # Shift+Tab switches the permission mode (tui/parts/modes_ui.py) where Textual's
    # screen would move the focus back; Tab's choices in the prompt take it first.
    BINDINGS: ClassVar[list[BindingType]] = [Binding("shift+tab", "cycle_mode", show=False)]

    def __init__(
        self,
        services: Services,
        *,
        exit: Callable[[int], object],
        resume: str | None = None,
        keep_model: bool = False,
        tune_gc: bool = False,
    ) -> None:
        """``exit``: the app's (quitting is the app's); ``tune_gc``: tune the process's
        garbage collector once up (tui/state/collector.py)."""
        super().__init__()
        self.services = services
        config = services.config
        project = config.workspace.name or str(config.workspace)
        header = HeaderState(
            version=__version__,
            model=config.model,
            host=server_label(config),
            project=project,
            branch=git_branch(config.workspace),
            profile=config.profile.value,
            mode=config.mode.value,
            # Start-up always warms a model up: the header and the terminal's title
            # never say Ready before it is (whichever of them is mounted first).
            status=Status.WARMING_UP.value,
        )
        self.header = HeaderBar(header, terminal_title=TerminalTitle(project))
        self.chat = ChatPane(id="main")  # the conversation, and the turn's worker
        # How the parts speak up: to the chat pane, which shows notices and entries at
        # once (the screen's own queue waits behind its layout) and passes the rest up;
        # the header's fields to the header itself, for the same reason.
        self.say = Say(self.chat.post_message, self.header.post_message)
        self.body = Body(id="body")  # shows or hides the sidebar (narrow terminals)
        self.sidebar = SessionList(id="sessions")  # in place of the placeholder at start
        self._sidebar_placeholder: SidebarPlaceholder | None = SidebarPlaceholder()
        self.plan_view = PlanView(id="plan")  # the model's plan, under the sessions
        self.task_view = TaskView(id="tasks")  # the repository's task board, under it
        self.transcript = self.chat.transcript
        self.prompt_input = self.chat.prompt_input
        self.parts = Parts(
            services, self.say, self, exit=exit, resume=resume, keep_model=keep_model
        )
        self.startup = Startup(self.parts.context, resume=resume is not None, tune_gc=tune_gc)
        self.escapes = DoubleEscape()  # Escape twice on an empty prompt: /rewind
        services.pending.on_change = self.show_queue
        services.pending.on_save_error = self.say.error
        services.goal.on_change = lambda: self.parts.goal.show_header()  # noqa: PLW0108
        services.goal.on_save_error = self.say.error

    # -- layout and what the parts say ----------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.header
        with self.body:
            with SideColumn():
                yield self._sidebar_placeholder or self.sidebar
                yield self.plan_view
                yield self.task_view
            yield self.chat
        yield Footer()

    def show(self, entry: Entry) -> Entry:
        return self.chat.show(entry)

    def notice(self, text: str) -> None:
        self.chat.notice(text)

    def error(self, text: str) -> None:
        self.chat.error(text)

    def on_model_changed(self, message: ModelChanged) -> None:
        self.header.refresh_state(model=message.model)

    def on_session_opened(self, message: SessionOpened) -> None:
        self.parts.model_ui.refresh_meter(after=message.shown)

    # -- start-up (tui/parts/startup.py) ------------------------------------------------------

    def on_mount(self) -> None:
        """Start-up's first stage; the second follows the first frame."""
        self.startup.open_history(self.prompt_input.habits)
        if self.services.config.relay.enabled:
            self.header.refresh_state(relay="starting")
        self.prompt_input.focus()
        self.parts.notifier.start(self.app)
        self.post_message(PromptFocused())  # keys typed during start-up go to it now
        if self.startup.resume:
            self.finish_start()
        else:
            self.app.call_after_refresh(self.finish_start)

    def finish_start(self) -> None:
        """Start-up's second stage: once, whichever asks first, and not at all when the
        app is already leaving (Ctrl+C on the first frame)."""
        if not self.startup.begin():
            return
        from zcoder.tui.parts.relay_ui import RELAY_POLL_SECONDS
        from zcoder.tui.parts.tasks_ui import TASKS_POLL_SECONDS
        from zcoder.tui.state.collector import tune_collector

        self.install_sidebar()
        self.parts.sessions.open_store()
        self.parts.relay_ui.start(spawn_now=self.startup.resume)
        steers = self.parts.peer_steers  # trusted peers' steering, beside the user's
        extensions = self.startup.make_agent(
            approver=self.parts.dialogs,
            on_event=steers.watching(self.parts.agent_view.on_event),
            peers=steers,
        )
        self.parts.modes.agent_made()  # a mode chosen while zcoder started (Shift+Tab)
        self.parts.custom_commands.install(extensions.skills, extensions.commands)
        self.parts.team.offer_tool()  # spawn_agent: workers in worktrees (tui/parts/team_ui.py)
        self.chat.show_deferred_after(self.parts.sessions.open_initial)  # its load starts the meter
        if self.services.session_id is None:  # no session store: the meter all the same
            self.parts.model_ui.refresh_meter()
        self.set_interval(RELAY_POLL_SECONDS, self.parts.relay_ui.poll)
        self.set_interval(RELAY_POLL_SECONDS, self.parts.jobs.poll)  # background commands
        self.set_interval(TASKS_POLL_SECONDS, self.parts.tasks.poll)  # the task board
        self.parts.tasks.poll()
        self.parts.relay_ui.watch_workspace_peers()  # another instance here already?
        self.parts.relay_ui.refresh_header()
        if self.startup.tune_gc:  # once the session's entries are on screen
            self.when_shown(self.parts.sessions.shown, tune_collector)
        if not self.parts.sessions.restoring_model:  # else it warms up the session's model
            self.parts.model_ui.start_warmup()
        self.schedule()  # prompts submitted before the start finished

    def stop_services(self) -> None:
        job_table().end_all()  # no background command outlives zcoder (tools/jobs.py)
        if self.startup.finished:  # else there is nothing to stop
            self.parts.relay_ui.stop()
            self.parts.sessions.close()
            agent = self.services.agent
            if agent is not None and agent.mcp is not None:  # no orphan servers
                agent.mcp.close()

    def install_sidebar(self) -> None:
        """The sessions list in place of the first frame's placeholder (start-up's second
        stage, before the sessions are listed)."""
        placeholder, self._sidebar_placeholder = self._sidebar_placeholder, None
        body = placeholder.parent if placeholder is not None else None
        if placeholder is None or not isinstance(body, Widget):
            return
        self.sidebar.display = placeholder.display
        body.mount(self.sidebar, before=placeholder)
        placeholder.remove()

    # -- turns: the user's prompt and relayed tasks, one at a time ----------------------

    def columns(self) -> int:
        """A transcript entry's text width: the transcript's, less an entry's padding."""
        return max(20, self.transcript.scrollable_content_region.width - 2)

    @property
    def busy(self) -> bool:
        return self.chat.busy

    def on_relay_nudge(self, _message: RelayNudge) -> None:
        inbox = self.parts.relay_ui.inbox
        inbox.note_arrivals()
        inbox.show_receipts()
        self.parts.relay_ui.policy.announce_held()
        self.parts.relay_ui.refresh_header()
        self.schedule()

    def on_run_next(self, _message: RunNext) -> None:
        self.schedule()

    def schedule(self) -> None:
        """When idle, start the next turn the scheduler names (tui/parts/turns.py)."""
        self.parts.turns.schedule()

    def note_user_acted(self) -> None:
        """The local user acted (a prompt, a dialog's answer, /agents continue): relayed
        tasks may run again without them, up to ZCODER_RELAY_MAX_AUTO_TURNS."""
        self.services.scheduler.note_user_acted()
        self.parts.relay_ui.refresh_header()
        self.schedule()

    def show_queue(self) -> None:
        """The strip above the prompt: the user's waiting input (called at every change)."""
        scheduler = self.services.scheduler
        waiting = self.parts.turns.waiting_items()
        self.chat.queued_prompts.show_queue(waiting, editing=scheduler.editing())

    def start_turn(
        self, work: Callable[[], Coroutine[Any, Any, object]], *, relay: bool, model: bool = True
    ) -> None:
        """Run ``work`` as the turn (a prompt, a relayed task, /compact, a !command:
        ``model`` False, it asks the model nothing and the warm-up goes on). The header
        changes at once: nothing queued before may undo it (tui/messages.py)."""
        if model:
            self.parts.model_ui.cancel_warmup()  # a real request supersedes the warm-up
        self.header.turn_started()
        self.chat.start_turn(work, steers=self.parts.turns.takes_steering)

    def on_turn_started(self, _message: TurnStarted) -> None:
        self.services.activity.turn_started()
        if self.services.relay is not None:
            self.services.relay.set_state("busy")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.parts.model_ui.warmup_ended(event)  # the turn's worker is the chat pane's

    def on_chat_pane_turn_ended(self, message: ChatPane.TurnEnded) -> None:
        worker = message.worker
        if worker is not self.chat.turn:
            return  # a newer turn started before this end was handled
        if worker.state is WorkerState.ERROR and worker.error is not None:
            log.error("turn failed", exc_info=worker.error)
            self.error(f"the turn failed unexpectedly: {worker.error!r}")
        self.chat.turn = None
        stopped = worker.state is WorkerState.CANCELLED
        seconds = self.header.turn_ended(stopped=stopped, failed=worker.state is WorkerState.ERROR)
        summary = turn_summary(seconds, stopped=stopped)
        if summary is not None:
            self.notice(summary)
        self.parts.peer_steers.turn_ended(stopped=stopped)  # peers' steers: done, receipts
        if self.services.relay is not None:
            self.services.relay.set_state("ready")
        self.services.activity.turn_ended()
        self.parts.notifier.call_back("the turn ended" if not stopped else "the turn was stopped")
        self.parts.relay_ui.refresh_header()
        self.schedule()

    # -- input --------------------------------------------------------------------------

    def remember(self, text: str) -> None:
        """``text`` into the prompt's history; its one problem (the history file cannot be
        written) is said once."""
        if (problem := self.prompt_input.habits.remember(text)) is not None:
            self.error(problem)

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text
        if not text.strip():
            return
        self.finish_start()  # a prompt typed before the start finished waits for it here
        if parse_user_command(text) == "":
            return  # a lone "!": nothing to run
        # What the user sends is answered at the end: the view goes there and follows it,
        # however far up they had scrolled to read.
        self.transcript.follow()
        self.remember(text)
        if self.run_command(text):  # the input cleared itself: keys typed since stay
            return
        turns = self.parts.turns
        # Enter while a turn runs steers it; Ctrl+G (``queue``) waits for its end. Idle,
        # both run the prompt now: there is nothing to steer, nor to wait behind.
        if self.busy and not message.queue and turns.steerable(text):
            turns.steer(text)
            return
        self.queue_prompt(text)

    def queue_prompt(self, text: str) -> None:
        """Queue ``text`` as the user's prompt; it starts at once when nothing runs."""
        marks = self.parts.relay_ui.sequences()
        self.services.scheduler.queue_prompt(
            text,
            last_accepted=marks.last_accepted,
            oldest_waiting=self.parts.relay_ui.oldest_waiting(),
        )
        self.note_user_acted()  # starts it at once when nothing runs

    def run_command(self, text: str) -> bool:
        """Run ``text`` if it is a slash command (tui/parts/slash.py); whether it was one."""
        command = parse_slash(text)
        if command is None:
            return False
        self.show(Entry("system", system_text(f"› {text.strip()}")))
        self.run_later(
            partial(self.parts.slash.run, command.name, command.argument),
            group="command",
            exit_on_error=True,
        )
        return True

    def palette_command(self, text: str, *, run: bool) -> None:
        """A command chosen in the palette (tui/widgets/command_palette.py): run as if typed, or,
        when it needs a value, put in the prompt to finish (a draft there goes to the
        history first, as Ctrl+C puts it: Up brings it back)."""
        self.finish_start()
        if run:
            self.transcript.follow()  # as for a command typed and sent
            self.run_command(text)
            return
        self.put_back(f"{text} ")

    def put_back(self, text: str) -> None:
        """``text`` in the prompt to edit; a draft there goes to the history (Up)."""
        if draft := self.chat.prefill(text):
            self.remember(draft)

    def on_prompt_input_edit_queued(self, _message: PromptInput.EditQueued) -> None:
        item = self.services.scheduler.take_last()
        if item is not None:
            self.prompt_input.load_text(item.text)
            self.prompt_input.move_cursor(self.prompt_input.document.end)
            self.show_queue()

    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        # A queued prompt taken back to edit is cancelled when the input is cleared.
        empty = event.text_area is self.prompt_input and not self.prompt_input.text.strip()
        if empty and self.services.scheduler.drop_recalled():
            self.show_queue()

    # -- what the app's keys ask for (tui/app.py) -----------------------------------------

    def stop_turn(self) -> bool:
        """Stop the running turn (or command); whether one ran."""
        if self.chat.stop_turn():
            self.parts.turns.hold_waiting()  # runs again on /queue resume
            self.parts.goal.stopped()  # a running goal pauses
            return True
        return False

    def escape(self) -> None:
        """Escape: stop what runs; else, pressed twice on an empty prompt, /rewind
        (tui/state/double_escape.py)."""
        stopped = self.stop_turn()
        rewind = commands().find("/rewind")
        counts = (
            not stopped
            and rewind is not None
            and rewind.applies_to(self.parts.front_end)  # not over --connect
            and len(self.app.screen_stack) == 1
            and not self.prompt_input.text
            and self.services.agent is not None
            and bool(self.services.agent.user_ledger)
        )
        if self.escapes.press(counts=counts):
            self.app.clear_notifications()
            self.run_later(partial(self.parts.rewind.rewind_command, ""), group="command")
        elif self.escapes.primed:
            self.app.notify(REWIND_AGAIN_TEXT, timeout=self.escapes.window)

    def action_cycle_mode(self) -> None:
        self.parts.modes.cycle()

    def show_output(self) -> None:
        """The newest command's whole output, or tool call's arguments and result (Ctrl+T)."""
        commands = [
            entry
            for entry in self.transcript.query("CommandEntry, ToolEntry")
            if isinstance(entry, CommandEntry | ToolEntry)
        ]
        if not commands:
            self.notice("No command or tool call in this session yet.")
            return
        if len(self.app.screen_stack) == 1:  # not over a dialog, nor over itself
            from zcoder.tui.dialogs.output import OutputScreen

            self.app.push_screen(OutputScreen(commands))

    def toggle_subagents(self) -> None:
        """Unfold every subagent's entry, or fold them all when the newest is unfolded
        (SUBAGENTS_KEY; a click on one folds or unfolds that one)."""
        entries = list(self.transcript.query(SubagentEntry))
        if not entries:
            self.notice("No subagent in this session yet.")
            return
        unfold = not entries[-1].unfolded
        for entry in entries:
            entry.toggle(unfold)

    def show_sessions_list(self) -> None:
        """/sessions: the list beside the transcript where it fits; in a narrow terminal
        the transcript keeps its width (the listing is in it, and Ctrl+B shows the list
        anyway). The focus stays in the prompt: what is typed next, Enter included, is
        the next prompt or command (a click puts the focus in the list)."""
        if not self.body.narrow:
            self.body.show_sidebar()

    def on_body_sidebar_hidden(self, _message: Body.SidebarHidden) -> None:
        self.prompt_input.focus()

    def on_key(self, event: events.Key) -> None:
        """Text typed while something in the transcript has the focus (the marker of
        earlier entries, after a click) goes to the prompt, which takes the focus back:
        typing is never lost."""
        focused = self.focused
        if not event.is_printable or event.character is None or focused is None:
            return
        if isinstance(focused, Transcript) or any(
            isinstance(node, Transcript) for node in focused.ancestors
        ):
            event.stop()
            self.set_focus(self.prompt_input)  # now: the keys after this one go there too
            self.prompt_input.insert(event.character)

    def on_session_list_left_for_prompt(self, message: SessionList.LeftForPrompt) -> None:
        self.prompt_input.focus()
        if message.text:
            self.prompt_input.insert(message.text)

    def new_session(self) -> None:
        self.finish_start()
        self.parts.sessions.new_session()

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        if isinstance(event.item, SessionItem):
            self.parts.sessions.switch_to(event.item.info.id)

    async def pick_model(self) -> None:
        self.finish_start()
        await self.parts.model_ui.pick()
