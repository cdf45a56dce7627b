"""The interactive zcoder: a Textual app around one Agent, one session store and the relay.

The agent runs in a worker on the app's event loop; the UI never blocks on it. The relay's
listener thread only nudges the app (``RelayNudge``, tui/relay_ui.py); the app alone claims
queued messages, one at a time, when idle. A prompt submitted while a turn runs is queued;
the TurnScheduler (tui/scheduler.py) orders the user's prompts and relayed tasks and holds
relayed tasks back once too many ran without the user. The model's context window, its
warm-up and changing the model are ModelUI's (tui/model_ui.py); slash commands are carried
out by SlashCommands (tui/slash.py).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, ClassVar

from textual.actions import SkipAction
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.widget import Widget
from textual.widgets import Footer, Input, ListView, TextArea
from textual.worker import Worker, WorkerState

from zcoder import __version__
from zcoder.agent.status import Status
from zcoder.config import Config
from zcoder.model.backends import server_label
from zcoder.tui.chat_pane import ChatPane
from zcoder.tui.commands import parse_slash, parse_user_command
from zcoder.tui.interrupt import QUIT_AGAIN_TEXT, QUIT_WINDOW_SECONDS, CtrlC, Press
from zcoder.tui.messages import Notice, Say, ShowEntry
from zcoder.tui.prompt import PromptInput
from zcoder.tui.scheduler import TurnScheduler
from zcoder.tui.startup import Startup
from zcoder.tui.status import HeaderBar, HeaderState, git_branch, turn_summary
from zcoder.tui.terminal import ZcoderDriver
from zcoder.tui.terminal_title import TerminalTitle
from zcoder.tui.transcript import (
    FULL_OUTPUT_KEY,
    CommandEntry,
    Entry,
    error_text,
    system_text,
)
from zcoder.tui.widgets import Body, SessionItem, SessionList, SidebarPlaceholder

if TYPE_CHECKING:
    # The agent, the model client, the relay, the session store and the parts of the UI
    # that drive them are imported after the first frame (ZcoderApp.finish_start), or
    # when first used: the first frame needs none of them.
    from zcoder.agent import Agent
    from zcoder.model.backends import ModelClient
    from zcoder.model.context import ContextWindow
    from zcoder.relay import Relay
    from zcoder.sessions import SessionStore
    from zcoder.tui.agent_view import AgentView
    from zcoder.tui.approvals import DialogApprovals
    from zcoder.tui.command_palette import PaletteCommand
    from zcoder.tui.custom_commands_ui import CustomCommandsUI
    from zcoder.tui.model_ui import ModelUI
    from zcoder.tui.quit_ui import QuitUI
    from zcoder.tui.relay_ui import RelayNudge, RelayUI
    from zcoder.tui.sessions_ui import SessionsUI
    from zcoder.tui.slash import SlashCommands
    from zcoder.tui.turns import Turns

log = logging.getLogger(__name__)

__all__ = ["ZcoderApp"]


def slash_commands_provider() -> type[Provider]:
    """The palette's provider of zcoder's commands, imported when the palette first opens."""
    from zcoder.tui.command_palette import SlashCommandsProvider

    return SlashCommandsProvider


class ZcoderApp(App[int]):
    TITLE = "zcoder"
    CSS = """
    Screen { layout: vertical; }
    #body { height: 1fr; }
    #main { width: 1fr; }
    """
    # Ctrl+P: zcoder's slash commands (tui/command_registry.py), then Textual's own.
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {
        slash_commands_provider,
        *App.COMMANDS,
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "stop_turn", "Stop", show=True),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+o", "pick_model", "Model"),
        Binding("ctrl+b", "toggle_sidebar", "Sessions"),
        Binding(FULL_OUTPUT_KEY, "show_output", "Output"),
        Binding("f2", "continue_relay", "Run waiting relayed tasks"),  # only while they wait
        # End follows new output again, unless it is moving the cursor of a typed prompt.
        Binding("end", "follow_output(True)", show=False, priority=True),
        Binding("ctrl+end", "follow_output(False)", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
        # First press stops the turn, a second within 2 s (or one when idle) quits.
        Binding("ctrl+c", "interrupt", "Stop or quit", show=False, priority=True),
    ]

    def __init__(
        self,
        config: Config,
        *,
        resume: str | None = None,
        keep_model: bool = False,
        tune_gc: bool = False,
    ) -> None:
        """``tune_gc``: tune the process's garbage collector once up (tui/collector.py);
        the program does, an app made in a test process shared with others does not."""
        super().__init__(driver_class=ZcoderDriver)  # keys as real terminals send them
        self.config = config
        self.model = config.model
        self._resume = resume
        self._keep_model = keep_model
        self.agent: Agent | None = None
        self.scheduler = TurnScheduler(config.relay.max_auto_turns)
        self._deferred: list[Entry] | None = []
        self.header_state = HeaderState(
            version=__version__,
            model=config.model,
            host=server_label(config),
            project=config.workspace.name or str(config.workspace),
            branch=git_branch(config.workspace),
            profile=config.profile.value,
            # Start-up always warms a model up (on_mount): the header and the terminal's
            # title never say Ready before it is (whichever of them is mounted first).
            status=Status.WARMING_UP.value,
        )
        self.header = HeaderBar(
            self.header_state, terminal_title=TerminalTitle(self.header_state.project)
        )
        # How the parts behind the screen speak to it (tui/messages.py).
        self.say = Say(self.post_message, self.header.refresh_state)
        self.startup = Startup(self, resume=resume is not None, tune_gc=tune_gc)
        self.ctrl_c = CtrlC()
        self.body = Body(id="body")  # shows or hides the sidebar (narrow terminals)
        self.sidebar = SessionList(id="sessions")  # in place of the placeholder at start
        self._sidebar_placeholder: SidebarPlaceholder | None = SidebarPlaceholder()
        self.chat = ChatPane(id="main")  # the conversation, and the turn's worker
        self.transcript = self.chat.transcript
        self.prompt_input = self.chat.prompt_input
        self.queued_prompts = self.chat.queued_prompts

    # -- the parts behind the screen, made when first used ------------------------------

    @cached_property
    def sessions(self) -> SessionsUI:
        from zcoder.tui.sessions_ui import SessionsUI

        return SessionsUI(self, self._resume, keep_model=self._keep_model)

    @cached_property
    def relay_ui(self) -> RelayUI:
        from zcoder.tui.relay_ui import RelayUI

        return RelayUI(self)

    @cached_property
    def model_ui(self) -> ModelUI:
        """The model's context window, its warm-up and changing the model."""
        from zcoder.tui.model_ui import ModelUI

        return ModelUI(self)

    @cached_property
    def slash(self) -> SlashCommands:
        from zcoder.tui.slash import SlashCommands

        return SlashCommands(self)

    @cached_property
    def custom_commands(self) -> CustomCommandsUI:
        """Custom commands and skills by name: /NAME, /skill, $NAME, /skills."""
        from zcoder.tui.custom_commands_ui import CustomCommandsUI, Services

        return CustomCommandsUI(
            Services(
                agent=lambda: self.agent,
                busy=lambda: self.busy,
                show=self.show,
                queue=self.queue_prompt,
                user_turn=self.turns.user_turn,
                refresh=(self.refresh_meter, self.refresh_sessions),
                workspace=self.config.workspace,
                home=self.config.home,
            )
        )

    @cached_property
    def turns(self) -> Turns:
        """What runs next, and the body of each kind of turn."""
        from zcoder.tui.turns import Turns

        return Turns(self)

    @cached_property
    def quit_ui(self) -> QuitUI:
        """Quitting with relayed messages still queued asks first."""
        from zcoder.tui.quit_ui import QuitUI

        return QuitUI(
            relay=lambda: self.relay,
            # RelayUI is made when first used: not by making this.
            record=lambda envelope, state: self.relay_ui.inbox.received(envelope, state),  # noqa: PLW0108
            exit=self.exit,
            ask=lambda dialog, answered: self.push_screen(dialog, callback=answered),
            say=self.say,
        )

    @cached_property
    def agent_view(self) -> AgentView:
        from zcoder.tui.agent_view import AgentView

        return AgentView(
            self.show,
            lambda status: self.header.refresh_state(status=status),
            lambda usage: self.header.refresh_state(context=usage),
        )

    @cached_property
    def dialogs(self) -> DialogApprovals:
        from zcoder.tui.approvals import DialogApprovals

        return DialogApprovals(
            self,
            error=self.error,
            # A key typed while a dialog was not yet armed was meant for the prompt.
            give_back=self.prompt_input.insert,
            user_acted=self.note_user_acted,
            asking=lambda asking: self.header.refresh_state(asking=asking),
        )

    # -- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The app keeps its own references: a query would search whichever screen is on
        # top (a dialog, say) and miss these.
        yield self.header
        with self.body:
            yield self._sidebar_placeholder or self.sidebar
            yield self.chat
        yield Footer()

    @property
    def store(self) -> SessionStore | None:
        return self.sessions.store

    @property
    def session_id(self) -> str | None:
        return self.sessions.session_id

    @property
    def relay(self) -> Relay | None:
        return self.relay_ui.relay

    @property
    def context_window(self) -> ContextWindow | None:
        """The current model's context window, once sized (tui/model_ui.py)."""
        return self.model_ui.context_window

    @property
    def busy(self) -> bool:
        return self.chat.busy

    def show(self, entry: Entry) -> Entry:
        if self._deferred is not None:
            self._deferred.append(entry)  # start-up: shown after the session's transcript
            return entry
        return self.transcript.add(entry)

    def show_deferred_after(self, first: Callable[[], object]) -> None:
        """Entries shown during start-up (``show``) were held; they are shown once
        ``first`` has run (it opens the session, whose transcript they follow)."""
        held, self._deferred = self._deferred or [], None
        first()
        for entry in held:
            self.show(entry)

    def notice(self, text: str) -> None:
        self.show(Entry("system", system_text(text)))

    def error(self, text: str) -> None:
        self.show(Entry("error", error_text(text)))

    def on_notice(self, message: Notice) -> None:
        """A part behind the screen said something (tui/messages.py)."""
        (self.error if message.error else self.notice)(message.text)

    def on_show_entry(self, message: ShowEntry) -> None:
        self.show(message.entry)

    # -- start and stop -----------------------------------------------------------------

    @cached_property
    def client(self) -> ModelClient:
        """Ollama, or an OpenAI-compatible server: made (and httpx imported) on first use,
        which is the second stage of start-up."""
        from zcoder.model.backends import make_client

        return make_client(self.config)

    def on_mount(self) -> None:
        """Start-up's first stage; the second follows the first frame (tui/startup.py)."""
        self.startup.first_stage()

    def finish_start(self) -> None:
        """Start-up's second stage: once, whichever asks first (tui/startup.py)."""
        self.startup.finish()

    @property
    def started(self) -> bool:
        """The second stage of start-up has run: agent, sessions and relay exist."""
        return self.startup.finished

    def refresh_meter(self, *, after: Awaitable[object] | None = None) -> None:
        """The header's context meter, measured again (tui/model_ui.py)."""
        self.model_ui.refresh_meter(after=after)

    def run_later(
        self,
        work: Callable[[], Coroutine[Any, Any, object]],
        *,
        group: str = "default",
        exit_on_error: bool = False,
    ) -> Worker[Any]:
        """``run_worker`` given a coroutine function, never a coroutine: a worker cancelled
        before it starts (the app quitting) then leaves no coroutine unawaited."""
        return self.run_worker(work, group=group, exit_on_error=exit_on_error)

    def when_shown(self, mounting: Awaitable[object] | None, then: Callable[[], object]) -> None:
        """``then`` once ``mounting`` is done (if any) and the screen drawn after it."""
        if mounting is None:
            self.call_after_refresh(then)
            return

        async def wait_then() -> None:
            await mounting
            self.call_after_refresh(then)

        self.run_later(wait_then)

    def refresh_sessions(self) -> None:
        self.sessions.refresh()

    def exit(
        self, result: int | None = None, return_code: int = 0, message: Any | None = None
    ) -> None:
        self.startup.leaving = True  # a start not yet finished is not finished now
        super().exit(result, return_code, message)

    def on_unmount(self) -> None:
        self._stop_services()

    def exit_on_signal(self, status: int) -> None:
        """SIGTERM or SIGHUP: no question asked; queued relayed messages are discarded and
        their senders told (tui/quit_ui.py), then the app exits."""
        self.quit_ui.discard_all()
        self.exit(status)

    async def action_quit(self) -> None:
        """Ctrl+Q: asks first when relayed messages would be dropped (tui/quit_ui.py)."""
        self.quit_ui.request(0)

    def forced_exit_cleanup(self) -> None:
        """What an exit that cannot go through Textual must still do (tui/exit_guard.py).

        The relay and the session lock first: they are what peers and other zcoders see.
        tmux's option is restored only if no restore is under way: that one may be this
        very thread's, interrupted by the signal that led here."""
        self._stop_services()
        driver = self._driver
        if isinstance(driver, ZcoderDriver):
            driver.tmux_keys.restore(wait=0)

    def _stop_services(self) -> None:
        if self.startup.finished:  # else there is nothing to stop
            self.relay_ui.stop()
            self.sessions.close()
            if self.agent is not None and self.agent.mcp is not None:  # no orphan servers
                self.agent.mcp.close()

    # -- turns: the user's prompt and relayed tasks, one at a time ----------------------

    def on_relay_nudge(self, _message: RelayNudge) -> None:
        self.relay_ui.inbox.note_arrivals()
        self.relay_ui.inbox.show_receipts()
        self.relay_ui.policy.announce_held()
        self.relay_ui.refresh_header()
        self.schedule()

    def schedule(self) -> None:
        """When idle, start the next turn the scheduler names (tui/turns.py)."""
        self.turns.schedule()

    def note_user_acted(self) -> None:
        """The local user acted (a prompt, a dialog's answer, /agents continue): relayed
        tasks may run again without them, up to ZCODER_RELAY_MAX_AUTO_TURNS."""
        self.scheduler.note_user_acted()
        self.relay_ui.refresh_header()
        self.schedule()

    def show_queue(self) -> None:
        self.queued_prompts.show_queue(self.scheduler.prompts(), editing=self.scheduler.editing())

    def start_turn(
        self, work: Callable[[], Coroutine[Any, Any, object]], *, relay: bool, model: bool = True
    ) -> None:
        """Run ``work`` as the turn (a prompt, a relayed task, /compact, a !command:
        ``model`` False, it asks the model nothing and the warm-up goes on)."""
        if model:
            self.model_ui.cancel_warmup()  # a real request supersedes the warm-up
        self.header.turn_started()
        if self.relay is not None:
            self.relay.set_state("busy")
        self.chat.start_turn(work)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.model_ui.warmup_ended(event)  # the turn's worker is the chat pane's

    def on_chat_pane_turn_ended(self, message: ChatPane.TurnEnded) -> None:
        worker = message.worker
        if worker is not self.chat.turn:
            return  # a newer turn started before this end was handled
        if worker.state is WorkerState.ERROR and worker.error is not None:
            log.error("turn failed", exc_info=worker.error)
            self.error(f"the turn failed unexpectedly: {worker.error!r}")
        self.chat.turn = None
        seconds = self.header.turn_ended(
            stopped=worker.state is WorkerState.CANCELLED, failed=worker.state is WorkerState.ERROR
        )
        summary = turn_summary(seconds, stopped=worker.state is WorkerState.CANCELLED)
        if summary is not None:
            self.notice(summary)
        if self.relay is not None:
            self.relay.set_state("ready")
        self.relay_ui.refresh_header()
        self.schedule()

    # -- input --------------------------------------------------------------------------

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text
        if not text.strip():
            return
        self.finish_start()  # a prompt typed before the start finished waits for it here
        if parse_user_command(text) == "":
            return  # a lone "!": nothing to run
        if (problem := self.prompt_input.habits.remember(text)) is not None:
            self.error(problem)  # once: the history file cannot be written
        if self.run_command(text):  # the input cleared itself: keys typed since stay
            return
        self.queue_prompt(text)

    def queue_prompt(self, text: str) -> None:
        """Queue ``text`` as the user's prompt; it starts at once when nothing runs."""
        marks = self.relay_ui.sequences()
        self.scheduler.queue_prompt(
            text, last_accepted=marks.last_accepted, oldest_waiting=self.relay_ui.oldest_waiting()
        )
        self.note_user_acted()  # starts it at once when nothing runs
        self.show_queue()

    def run_command(self, text: str) -> bool:
        """Run ``text`` if it is a slash command (tui/slash.py); whether it was one."""
        command = parse_slash(text)
        if command is None:
            return False
        self.show(Entry("system", system_text(f"› {text.strip()}")))
        self.run_later(
            partial(self.slash.run, command.name, command.argument),
            group="command",
            exit_on_error=True,
        )
        return True

    def on_palette_command(self, message: PaletteCommand) -> None:
        """A command chosen in the palette (tui/command_palette.py): run as if typed, or,
        when it needs a value, put in the prompt to finish (a draft there goes to the
        history first, as Ctrl+C puts it: Up brings it back)."""
        self.finish_start()
        if message.run:
            self.run_command(message.text)
            return
        draft = self.chat.prefill(f"{message.text} ")
        if draft and (problem := self.prompt_input.habits.remember(draft)):
            self.error(problem)

    def on_prompt_input_edit_queued(self, _message: PromptInput.EditQueued) -> None:
        text = self.scheduler.take_last()
        if text is not None:
            self.prompt_input.load_text(text)
            self.prompt_input.move_cursor(self.prompt_input.document.end)
            self.show_queue()

    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        # A queued prompt taken back to edit is cancelled when the input is cleared.
        empty = event.text_area is self.prompt_input and not self.prompt_input.text.strip()
        if empty and self.scheduler.drop_recalled():
            self.show_queue()

    # -- actions ------------------------------------------------------------------------

    def action_stop_turn(self) -> None:
        if self.chat.stop_turn() and (queued := len(self.scheduler.prompts())):
            self.notice(
                f"Stopped. Your {queued} queued prompt{'s stay' if queued > 1 else ' stays'}"
                " queued and will run; ↑ in the empty prompt takes the last one back."
            )

    def action_follow_output(self, unless_typing: bool) -> None:
        """End (unless it moves the cursor of typed text) or Ctrl+End: the transcript goes
        to its end and follows new output again."""
        if len(self.screen_stack) > 1:
            raise SkipAction()  # a dialog is open: the key is its own
        focused = self.focused
        if unless_typing and isinstance(focused, TextArea) and focused.text:
            # End belongs to the text being typed: move its cursor here, as the TextArea's
            # own binding would (passing the key on with SkipAction lost it now and then).
            focused.action_cursor_line_end()
            return
        if unless_typing and isinstance(focused, Input) and focused.value:
            focused.action_end()
            return
        self.transcript.follow()

    def action_interrupt(self) -> None:
        """Ctrl+C (tui/interrupt.py): clear a draft, else stop the turn and close a dialog
        as Escape does, or quit. It never answers a dialog with anything but its refusal."""
        top = self.screen
        dialog_open = len(self.screen_stack) > 1
        if not dialog_open and (draft := self.prompt_input.take_draft()):
            # The first press clears a draft; it is kept in the history (Up brings it back).
            if (problem := self.prompt_input.habits.remember(draft)) is not None:
                self.error(problem)
            return
        if self.ctrl_c.press(running=self.busy or dialog_open) is Press.QUIT:
            self.quit_ui.request(0)
            return
        # A turn's dialog is closed, as a refusal, by stopping the turn (tui/approvals.py);
        # any other dialog gets the Escape it would get from the user.
        from zcoder.tui.dialogs import GuardedDialog

        turn_dialog = self.busy and isinstance(top, GuardedDialog)
        self.action_stop_turn()
        if dialog_open and not turn_dialog:
            self.simulate_key("escape")
        self.notify(QUIT_AGAIN_TEXT, timeout=QUIT_WINDOW_SECONDS)

    def action_show_output(self) -> None:
        """The whole output of the newest command in the transcript (Ctrl+T, /output)."""
        commands = list(self.transcript.query(CommandEntry))
        if not commands:
            self.notice("No command has run in this session yet.")
            return
        if len(self.screen_stack) == 1:  # not over a dialog, nor over itself
            from zcoder.tui.output_screen import OutputScreen

            self.push_screen(OutputScreen(commands))

    def action_continue_relay(self) -> None:
        self.relay_ui.agents_command("continue")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "continue_relay":
            return self.header_state.waiting  # the key is shown only while tasks wait
        return True

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

    def action_toggle_sidebar(self) -> None:
        self.body.toggle_sidebar()

    def on_body_sidebar_hidden(self, _message: Body.SidebarHidden) -> None:
        self.prompt_input.focus()

    def on_session_list_left_for_prompt(self, message: SessionList.LeftForPrompt) -> None:
        self.prompt_input.focus()
        if message.text:
            self.prompt_input.insert(message.text)

    def action_new_session(self) -> None:
        self.finish_start()
        self.sessions.new_session()

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        if isinstance(event.item, SessionItem):
            self.sessions.switch_to(event.item.info.id)

    async def action_pick_model(self) -> None:
        self.finish_start()
        await self.model_ui.pick()
