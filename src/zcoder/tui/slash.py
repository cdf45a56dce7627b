"""Slash commands carried out in the app (tui/commands.py parses them and has the help).

``/context`` and ``/compact`` are here; the relay's commands are RelayUI's
(tui/relay_ui.py) and ``/model``'s are ModelUI's (tui/model_ui.py).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from zcoder.agent.usage import render_breakdown
from zcoder.model import ModelError
from zcoder.tui.commands import help_text
from zcoder.tui.edits_ui import EditsUI

if TYPE_CHECKING:
    from zcoder.tui.app import ZcoderApp


class SlashCommands:
    def __init__(self, app: ZcoderApp) -> None:
        self.app = app
        self.edits = EditsUI(app)

    async def run(self, name: str, argument: str) -> None:
        app = self.app
        if name == "/help":
            app.notice(help_text())
        elif name == "/quit":
            app.quit_ui.request(0)
        elif name == "/new":
            app.action_new_session()
        elif name == "/sessions":
            if argument.lower() not in ("", "all"):
                app.error(f"/sessions takes no argument but all, not {argument!r}")
                return
            app.sessions.show_one_shot = argument.lower() == "all"
            app.body.show_sidebar()
            app.refresh_sessions()
            app.notice(app.sessions.listing())
            app.sidebar.focus()
        elif name == "/copy":
            self._copy()
        elif name == "/model":
            if argument:
                app.model_ui.set_model(argument)
            else:
                await app.model_ui.pick()
        elif name == "/context":
            self._show_context()
        elif name == "/output":
            app.action_show_output()
        elif name == "/compact":
            self._compact(argument)
        elif name == "/diff":
            await self.edits.show_diff()
        elif name == "/undo":
            await self.edits.undo()
        elif name == "/list-agents":
            await app.relay_ui.list_agents()
        elif name == "/agents":
            app.relay_ui.agents_command(argument)
        elif name == "/inbox":
            app.relay_ui.inbox.command(argument)
        elif name == "/rename":
            app.relay_ui.rename(argument)
        else:
            app.error(f"unknown command {name}; /help lists the commands")

    def _copy(self) -> None:
        """The last reply to the terminal's clipboard: Textual writes OSC 52 (ESC ] 52 ; c ;
        base64 BEL). A terminal without OSC 52 ignores it. tmux's default set-clipboard
        (``external``) ignores it from programs: ``set -s set-clipboard on`` makes tmux take
        it into its paste buffer and pass it on to the outer terminal (docs/usage.md)."""
        app = self.app
        text = app.sessions.last_reply()
        if not text or not text.strip():
            app.notice("Nothing to copy yet: there is no reply in this session.")
            return
        app.copy_to_clipboard(text)
        app.notice(
            f"Copied {len(text)} characters of the last reply to the clipboard (OSC 52; "
            "in tmux this needs set-clipboard on)."
        )

    def _show_context(self) -> None:
        app = self.app
        if app.agent is None:
            return
        app.notice(render_breakdown(app.agent.context_breakdown(), app.model_ui.window_source()))
        app.refresh_meter()

    def _compact(self, focus: str) -> None:
        app = self.app
        if app.agent is None:
            return
        if app.busy:
            app.notice("/compact runs when no turn is running; try again when this one ends.")
            return
        app.start_turn(partial(self._compact_turn, focus), relay=False)

    async def _compact_turn(self, focus: str) -> None:
        app = self.app
        assert app.agent is not None
        await app.model_ui.window_ready()  # the summary request is sized like every other
        app.header.refresh_state(status="Compacting")
        try:
            result = await app.agent.compact(focus)
        except ModelError as exc:
            app.error(f"compaction failed, nothing was changed: {exc}")
            app.header.refresh_state(status="Error")
            return
        if not result.compacted:
            app.notice(f"Nothing compacted: {result.text}.")
        app.header.refresh_state(status="Ready")
        app.refresh_meter()
