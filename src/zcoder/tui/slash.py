"""Slash commands carried out in the app (tui/commands.py parses them).

Each command is declared, with its help, on the method that carries it out
(tui/command_registry.py): ``/help``, ``/context``, ``/compact`` and ``/copy`` here; the
relay's on RelayUI (tui/relay_ui.py), ``/model`` on ModelUI (tui/model_ui.py), the
sessions' on SessionsUI, ``/diff`` and ``/undo`` on EditsUI, ``/mcp`` on McpUI,
``/quit`` on QuitUI; custom commands and skills on CustomCommandsUI.

``run`` finds the command in the registry and the object that carries it out among
``owners`` (the screen's parts). It takes those and the few calls its own commands need,
never the app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from zcoder.agent.usage import render_breakdown
from zcoder.base.plural import counted
from zcoder.tui.command_registry import Form, commands, declares_commands, help_text, slash_command
from zcoder.tui.commands import KEYS
from zcoder.tui.help_view import HelpEntry

if TYPE_CHECKING:
    from zcoder.tui.messages import Say
    from zcoder.tui.model_ui import ModelUI
    from zcoder.tui.services import Services
    from zcoder.tui.sessions_ui import SessionsUI
    from zcoder.tui.turns import Turns


@declares_commands
@dataclass(eq=False)
class SlashCommands:
    """Runs a command by name (the registry finds it and the object that carries it out);
    carries out those of the app as a whole: /help, /context, /output, /compact, /copy."""

    services: Services
    say: Say
    _: KW_ONLY
    owners: Callable[[], Iterable[object]]
    """The objects that carry out the other commands."""
    model: ModelUI
    sessions: SessionsUI
    turns: Turns
    show_output: Callable[[], object]
    """Shows the last command's output (Ctrl+T)."""
    copy: Callable[[str], object]
    """Puts text on the clipboard."""

    async def run(self, name: str, argument: str) -> None:
        command = commands().find(name)
        if command is None:
            self.say.error(f"unknown command {name}; /help lists the commands")
            return
        owners = (self, *self.owners())
        owner = next(o for o in owners if isinstance(o, command.owner))
        await command.call(owner, argument)

    @slash_command(Form("/help", "show this help"), aliases=("/?",))
    def help_command(self, _argument: str) -> None:
        self.say.show(HelpEntry(help_text(commands(), KEYS)))

    @slash_command(Form("/context", "how full the context window is, and what fills it"))
    def context_command(self, _argument: str) -> None:
        self._show_context()

    @slash_command(
        Form("/output", "the last command's whole output, or tool call's arguments (Ctrl+T)")
    )
    def output_command(self, _argument: str) -> None:
        self.show_output()

    @slash_command(
        Form(
            "/compact [FOCUS]",
            "replace older history with a summary the model writes (idle only)",
        )
    )
    def compact_command(self, argument: str) -> None:
        self.turns.compact(argument)

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
        text = self.sessions.last_reply()
        if not text or not text.strip():
            self.say.notice("Nothing to copy yet: there is no reply in this session.")
            return
        self.copy(text)
        self.say.notice(
            f"Copied {counted(len(text), 'character')} of the last reply to the clipboard (OSC 52; "
            "in tmux this needs set-clipboard on)."
        )

    def _show_context(self) -> None:
        agent = self.services.agent
        if agent is None:
            return
        self.say.notice(render_breakdown(agent.context_breakdown(), self.model.window_source()))
        self.model.refresh_meter()
