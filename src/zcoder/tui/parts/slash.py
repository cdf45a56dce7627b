"""Slash commands carried out in the app (tui/parts/commands.py parses them).

Each command is declared once, with its help, in zcoder.slash.declared, on the class that
is its owner type; the part that carries it out here subclasses that class: ``/help``,
``/context``, ``/output``, ``/compact`` and ``/copy`` here (AppCommands); the relay's on
RelayUI, ``/model`` on ModelUI, the sessions' on SessionsUI, ``/diff`` and ``/undo`` on
EditsUI, ``/mcp`` on McpUI, ``/quit`` on QuitUI, ``/skills`` on CustomCommandsUI.

``run`` finds the command in the registry and the part that carries it out among
``owners`` (the screen's parts, filed by type: zcoder.slash.owners). It takes those and
the few calls its own commands need, never the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from zcoder.agent.usage import render_breakdown
from zcoder.base.plural import counted
from zcoder.slash.declared import AppCommands
from zcoder.slash.owners import NoOwner, Owners
from zcoder.slash.registry import commands, help_text
from zcoder.tui.parts.commands import KEYS
from zcoder.tui.parts.services import Part
from zcoder.tui.widgets.help_view import HelpEntry

if TYPE_CHECKING:
    from zcoder.tui.parts.model_ui import ModelUI
    from zcoder.tui.parts.sessions_ui import SessionsUI
    from zcoder.tui.parts.turns import Turns


@dataclass(eq=False)
class SlashCommands(Part, AppCommands):
    """Runs a command by name (the registry finds it and the object that carries it out);
    carries out those of the app as a whole: /help, /context, /output, /compact, /copy."""

    _: KW_ONLY
    owners: Callable[[], Owners]
    """The parts that carry out commands, this one among them (Parts.command_owners)."""
    model: ModelUI
    sessions: SessionsUI
    turns: Turns
    show_output: Callable[[], object]
    """Shows the last command's output (Ctrl+T)."""
    copy: Callable[[str], object]
    """Puts text on the clipboard."""

    async def run(self, name: str, argument: str) -> None:
        owners = self.owners()
        command = commands().find(name)
        if command is None or not command.applies_to(owners.front_end):
            self.say.error(f"unknown command {name}; /help lists the commands")
            return
        try:
            owner = owners.owner_of(command)
        except NoOwner as exc:  # a declaration no part carries out: tests/slash find it
            self.say.error(str(exc))
            return
        answer = await command.call(owner, argument)
        if answer:  # a command declared the same for every front end answers
            self.say.notice(answer)

    def help_command(self, _argument: str) -> None:
        self.say.show(HelpEntry(help_text(commands(), KEYS)))

    def context_command(self, _argument: str) -> None:
        self._show_context()

    def output_command(self, _argument: str) -> None:
        self.show_output()

    def compact_command(self, argument: str) -> None:
        self.turns.compact(argument)

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
