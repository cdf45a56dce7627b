"""Slash commands carried out in the app (tui/commands.py parses them).

Each command is declared, with its help, on the method that carries it out
(tui/command_registry.py): ``/help``, ``/context``, ``/compact`` and ``/copy`` here; the
relay's on RelayUI (tui/relay_ui.py), ``/model`` on ModelUI (tui/model_ui.py), the
sessions' on SessionsUI, ``/diff`` and ``/undo`` on EditsUI, ``/mcp`` on McpUI,
``/quit`` on QuitUI.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from zcoder.agent.usage import render_breakdown
from zcoder.model import ModelError
from zcoder.tui.command_registry import Form, commands, declares_commands, help_text, slash_command
from zcoder.tui.commands import KEYS
from zcoder.tui.edits_ui import EditsUI
from zcoder.tui.mcp_ui import McpUI

if TYPE_CHECKING:
    from zcoder.tui.app import ZcoderApp


@declares_commands
class SlashCommands:
    """Runs a command by name (the registry finds it and the object that carries it out);
    carries out those of the app as a whole: /help, /context, /output, /compact, /copy."""

    def __init__(self, app: ZcoderApp) -> None:
        self.app = app
        self.say = app.say
        self.edits = EditsUI(
            agent=lambda: app.agent,
            busy=lambda: app.busy,
            confirm_undo=app.dialogs.confirm_undo,
            say=app.say,
        )
        self.mcp = McpUI(manager=lambda: app.agent.mcp if app.agent else None, say=app.say)

    async def run(self, name: str, argument: str) -> None:
        app = self.app
        command = commands().find(name)
        if command is None:
            self.say.error(f"unknown command {name}; /help lists the commands")
            return
        owners = (
            self,
            self.edits,
            self.mcp,
            app.sessions,
            app.model_ui,
            app.relay_ui,
            app.relay_ui.inbox,
            app.quit_ui,
            app.custom_commands,
        )
        owner = next(o for o in owners if isinstance(o, command.owner))
        await command.call(owner, argument)

    @slash_command(Form("/help", "show this help"), aliases=("/?",))
    def help_command(self, _argument: str) -> None:
        self.say.notice(help_text(commands(), KEYS))

    @slash_command(Form("/context", "how full the context window is, and what fills it"))
    def context_command(self, _argument: str) -> None:
        self._show_context()

    @slash_command(Form("/output", "the whole output of the last command (also Ctrl+T)"))
    def output_command(self, _argument: str) -> None:
        self.app.action_show_output()

    @slash_command(
        Form(
            "/compact [FOCUS]",
            "replace older history with a summary the model writes (idle only)",
        )
    )
    def compact_command(self, argument: str) -> None:
        self._compact(argument)

    @slash_command(
        Form("/copy", "copy the last reply, as the model wrote it, to the clipboard (OSC 52)")
    )
    def copy_command(self, _argument: str) -> None:
        self._copy()

    def _copy(self) -> None:
        """The last reply to the terminal's clipboard: Textual writes OSC 52 (ESC ] 52 ; c ;
        base64 BEL). A terminal without OSC 52 ignores it. tmux's default set-clipboard
        (``external``) ignores it from programs: ``set -s set-clipboard on`` makes tmux take
        it into its paste buffer and pass it on to the outer terminal (docs/usage.md)."""
        app = self.app
        text = app.sessions.last_reply()
        if not text or not text.strip():
            self.say.notice("Nothing to copy yet: there is no reply in this session.")
            return
        app.copy_to_clipboard(text)
        self.say.notice(
            f"Copied {len(text)} characters of the last reply to the clipboard (OSC 52; "
            "in tmux this needs set-clipboard on)."
        )

    def _show_context(self) -> None:
        app = self.app
        if app.agent is None:
            return
        self.say.notice(
            render_breakdown(app.agent.context_breakdown(), app.model_ui.window_source())
        )
        app.refresh_meter()

    def _compact(self, focus: str) -> None:
        app = self.app
        if app.agent is None:
            return
        if app.busy:
            self.say.notice("/compact runs when no turn is running; try again when this one ends.")
            return
        app.start_turn(partial(self._compact_turn, focus), relay=False)

    async def _compact_turn(self, focus: str) -> None:
        app = self.app
        assert app.agent is not None
        await app.model_ui.window_ready()  # the summary request is sized like every other
        self.say.header(status="Compacting")
        try:
            result = await app.agent.compact(focus)
        except ModelError as exc:
            self.say.error(f"compaction failed, nothing was changed: {exc}")
            self.say.header(status="Error")
            return
        if not result.compacted:
            self.say.notice(f"Nothing compacted: {result.text}.")
        self.say.header(status="Ready")
        app.refresh_meter()
