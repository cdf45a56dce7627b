"""The interactive zcoder: a Textual app that owns the services and quitting.

The app is small on purpose. It makes the services (tui/parts/services.py: the config, the model
in use, the agent, the session store, the relay, the turn scheduler) and stops them at
exit, whatever way the exit comes (Ctrl+Q, /quit, a signal, a forced exit: tui/parts/quit_ui.py,
tui/state/exit_guard.py). Everything on screen is the main screen's (tui/main_screen.py): it
composes the header, the sessions list and the chat pane, makes the parts behind them and
routes what they say. The app's key bindings stay here because they must work over a
dialog too; each asks the main screen.

The agent runs in a worker on the chat pane; the UI never blocks on it. The relay's
listener thread only nudges the screen (``RelayNudge``, tui/messages.py); the screen alone
claims queued messages, one at a time, when idle (tui/parts/turns.py).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual.actions import SkipAction
from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.widgets import Input, TextArea

from zcoder.config import Config
from zcoder.tui.main_screen import MainScreen
from zcoder.tui.messages import PromptFocused
from zcoder.tui.parts.services import Services
from zcoder.tui.state.exit_guard import ExitGuard
from zcoder.tui.state.interrupt import QUIT_AGAIN_TEXT, CtrlC, Press
from zcoder.tui.terminal import ZcoderDriver
from zcoder.tui.widgets.subagent_entry import SUBAGENTS_KEY
from zcoder.tui.widgets.transcript import FULL_OUTPUT_KEY

if TYPE_CHECKING:
    from zcoder.agent import Agent
    from zcoder.model.backends import ModelClient
    from zcoder.model.context import ContextWindow
    from zcoder.relay import Relay
    from zcoder.sessions import SessionStore
    from zcoder.tui.parts.agent_view import AgentView
    from zcoder.tui.parts.custom_commands_ui import CustomCommandsUI
    from zcoder.tui.parts.sessions_ui import SessionsUI
    from zcoder.tui.parts.slash import SlashCommands
    from zcoder.tui.state.scheduler import TurnScheduler
    from zcoder.tui.widgets.command_palette import PaletteCommand
    from zcoder.tui.widgets.prompt import PromptInput
    from zcoder.tui.widgets.queued import QueuedPrompts
    from zcoder.tui.widgets.shared import SessionList
    from zcoder.tui.widgets.status import HeaderBar, HeaderState
    from zcoder.tui.widgets.transcript import Entry, Transcript

__all__ = ["ZcoderApp"]


def slash_commands_provider() -> type[Provider]:
    """The palette's provider of zcoder's commands, imported when the palette first opens."""
    from zcoder.tui.widgets.command_palette import SlashCommandsProvider

    return SlashCommandsProvider


def _forward(*path: str) -> Any:
    """A read-only attribute that reads ``path`` from the app (``_forward("main",
    "header")`` is ``app.main.header``); the annotation it is assigned to gives its type."""
    return property(lambda app: functools.reduce(getattr, path, app))


class ZcoderApp(App[int]):
    TITLE = "zcoder"
    # The main screen's layout (tui/main_screen.py), as app CSS: it outranks the widgets'
    # default CSS.
    CSS = """
    Screen { layout: vertical; }
    #body { height: 1fr; }
    #main { width: 1fr; }
    """
    # Ctrl+P: zcoder's slash commands (slash/registry.py), then Textual's own.
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
        Binding(SUBAGENTS_KEY, "toggle_subagents", "Subagents", show=False),
        Binding("f2", "continue_relay", "Run waiting relayed tasks"),  # only while they wait
        # End follows new output again, unless it is moving the cursor of a typed prompt.
        Binding("end", "follow_output(True)", show=False, priority=True),
        Binding("ctrl+end", "follow_output(False)", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
        # The first press stops the turn (or says what a second does), a second within
        # QUIT_WINDOW_SECONDS quits (tui/state/interrupt.py).
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
        """``tune_gc``: tune the process's garbage collector once up (tui/state/collector.py);
        the program does, an app made in a test process shared with others does not."""
        super().__init__(driver_class=ZcoderDriver)  # keys as real terminals send them
        self.services = Services(config, busy=lambda: self.main.busy)
        self.ctrl_c = CtrlC()
        self.main = self.make_main_screen(resume=resume, keep_model=keep_model, tune_gc=tune_gc)

    def make_main_screen(
        self, *, resume: str | None, keep_model: bool, tune_gc: bool
    ) -> MainScreen:
        """The screen the app opens on (``zcoder --connect`` makes its own: remote/app.py)."""
        return MainScreen(
            self.services,
            exit=self.exit,
            resume=resume,
            keep_model=keep_model,
            tune_gc=tune_gc,
        )

    def get_default_screen(self) -> MainScreen:
        return self.main

    # -- the services and the main screen's parts, by name (tests and run.py read them) --

    config: Config = _forward("services", "config")
    model: str = _forward("services", "model")
    client: ModelClient = _forward("services", "client")
    agent: Agent | None = _forward("services", "agent")
    store: SessionStore | None = _forward("services", "store")
    session_id: str | None = _forward("services", "session_id")
    relay: Relay | None = _forward("services", "relay")
    scheduler: TurnScheduler = _forward("services", "scheduler")
    busy: bool = _forward("main", "busy")
    header: HeaderBar = _forward("main", "header")
    header_state: HeaderState = _forward("main", "header", "state")
    sidebar: SessionList = _forward("main", "sidebar")
    transcript: Transcript = _forward("main", "transcript")
    prompt_input: PromptInput = _forward("main", "prompt_input")
    queued_prompts: QueuedPrompts = _forward("main", "chat", "queued_prompts")
    sessions: SessionsUI = _forward("main", "parts", "sessions")
    slash: SlashCommands = _forward("main", "parts", "slash")
    agent_view: AgentView = _forward("main", "parts", "agent_view")
    custom_commands: CustomCommandsUI = _forward("main", "parts", "custom_commands")
    context_window: ContextWindow | None = _forward("main", "parts", "model_ui", "context_window")
    """The current model's context window, once sized (tui/parts/model_ui.py)."""
    started: bool = _forward("main", "startup", "finished")
    """The second stage of start-up has run: agent, sessions and relay exist."""

    def show(self, entry: Entry) -> Entry:
        return self.main.show(entry)

    # -- start and stop -----------------------------------------------------------------

    def on_mount(self) -> None:
        """SIGTERM and SIGHUP leave cleanly from now on (tui/state/exit_guard.py); the main
        screen does the rest of start-up's first stage (tui/parts/startup.py)."""
        loop = asyncio.get_running_loop()

        def exit_from_any_thread(status: int) -> None:
            loop.call_soon_threadsafe(self.exit_on_signal, status)

        ExitGuard(exit_from_any_thread, self.forced_exit_cleanup).install()

    def exit(
        self, result: int | None = None, return_code: int = 0, message: Any | None = None
    ) -> None:
        self.main.startup.leaving = True  # a start not yet finished is not finished now
        super().exit(result, return_code, message)

    def on_prompt_focused(self, _message: PromptFocused) -> None:
        """The keys typed while zcoder started reach the prompt from now on."""
        driver = self._driver
        if isinstance(driver, ZcoderDriver):
            driver.take_keys()

    def on_unmount(self) -> None:
        self._stop_services()

    def exit_on_signal(self, status: int) -> None:
        """SIGTERM or SIGHUP: no question asked; queued relayed messages are discarded and
        their senders told (tui/parts/quit_ui.py), then the app exits."""
        self.main.parts.quit_ui.discard_all()
        self.exit(status)

    async def action_quit(self) -> None:
        """Ctrl+Q: asks first when relayed messages would be dropped (tui/parts/quit_ui.py)."""
        self.main.parts.quit_ui.request(0)

    def forced_exit_cleanup(self) -> None:
        """What an exit that cannot go through Textual must still do (tui/state/exit_guard.py).

        The relay and the session lock first: they are what peers and other zcoders see.
        tmux's option is restored only if no restore is under way: that one may be this
        very thread's, interrupted by the signal that led here."""
        self._stop_services()
        driver = self._driver
        if isinstance(driver, ZcoderDriver):
            driver.tmux_keys.restore(wait=0)

    def _stop_services(self) -> None:
        self.main.stop_services()

    # -- keys: they work over dialogs too, so they are the app's ------------------------

    def on_palette_command(self, message: PaletteCommand) -> None:
        self.main.palette_command(message.text, run=message.run)

    def action_stop_turn(self) -> None:
        self.main.escape()  # stops a turn; twice on an empty prompt, /rewind

    def action_follow_output(self, unless_typing: bool) -> None:
        """End (unless it moves the cursor of typed text) or Ctrl+End: the transcript goes
        to its end and follows new output again."""
        if len(self.screen_stack) > 1:
            raise SkipAction()  # a dialog is open: the key is its own
        focused = self.focused
        # End belongs to the text being typed: its cursor moves as the widget's own binding
        # would move it (passing the key on with SkipAction lost it now and then). The move
        # goes through the widget's queue, behind keys it has not handled yet: a priority
        # binding runs here first, and Left Left End '!' typed fast ended 'questi!on'.
        if unless_typing and isinstance(focused, TextArea) and focused.text:
            focused.call_later(focused.action_cursor_line_end)
            return
        if unless_typing and isinstance(focused, Input) and focused.value:
            focused.call_later(focused.action_end)
            return
        self.main.transcript.follow()

    def action_interrupt(self) -> None:
        """Ctrl+C (tui/state/interrupt.py): clear a draft, else stop the turn and close a dialog
        as Escape does, or say that another press quits; a second press soon after quits.
        It never answers a dialog with anything but its refusal."""
        top = self.screen
        dialog_open = len(self.screen_stack) > 1
        if not dialog_open and (draft := self.main.prompt_input.take_draft()):
            # The first press clears a draft; it is kept in the history (Up brings it back).
            self.main.remember(draft)
            self.ctrl_c.forget()
            return
        press = self.ctrl_c.press(running=self.busy or dialog_open)
        if press is Press.QUIT:
            self.clear_notifications()
            self.main.parts.quit_ui.request(0)
            return
        if press is Press.STOP:
            # A turn's dialog is closed, as a refusal, by stopping the turn
            # (tui/parts/approvals.py); any other dialog gets the Escape it would get from the user.
            from zcoder.tui.dialogs.guarded import GuardedDialog

            turn_dialog = self.busy and isinstance(top, GuardedDialog)
            self.main.stop_turn()
            if dialog_open and not turn_dialog:
                self.simulate_key("escape")
        self.notify(QUIT_AGAIN_TEXT, timeout=self.ctrl_c.window)

    def action_show_output(self) -> None:
        self.main.show_output()

    def action_toggle_subagents(self) -> None:
        self.main.toggle_subagents()

    def action_continue_relay(self) -> None:
        self.main.parts.relay_ui.agents_command("continue")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "continue_relay":
            return self.main.header.waiting  # the key is shown only while tasks wait
        return True

    def action_toggle_sidebar(self) -> None:
        self.main.body.toggle_sidebar()

    def action_new_session(self) -> None:
        self.main.new_session()

    async def action_pick_model(self) -> None:
        await self.main.pick_model()
