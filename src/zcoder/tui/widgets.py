"""Small shared pieces of the UI: ``screen_safe`` and the sessions list.

The header is tui/status.py, the transcript tui/transcript.py, the prompt tui/prompt.py.

All text from the model, tools and peers is rendered as plain ``rich.text.Text``, never as
markup, and passes ``screen_safe`` first: Rich drops only a few control characters (BEL,
CR...) and lets ESC through, so without it a relayed task, a model reply or a command's
output could write escape sequences to the terminal (clear it, retitle it, hide text).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import ListItem, ListView, Static

from zcoder.relay.sanitize import visible_lines
from zcoder.sessions import SessionInfo


def screen_safe(text: str) -> str:
    """Text that cannot drive the terminal nor hide anything; line breaks and tabs are kept.

    C0 and C1 controls, lone surrogates and invisible characters (zero-width, bidi, tags...:
    the one table is ``zcoder.relay.sanitize``) are made visible (``\\e``, ``\\x9b``,
    ``\\u200b``...) rather than sent to the terminal. CRLF becomes LF.
    """
    return visible_lines(text.replace("\r\n", "\n"))


class SessionItem(ListItem):
    """Two rows: the title, then the id (``zcoder --resume ID`` reopens it)."""

    def __init__(self, info: SessionInfo, current: bool) -> None:
        marker = "● " if current else "  "
        title = screen_safe(info.title)
        text = Text.assemble(marker + title, "\n", ("  " + info.id, "dim"))
        text.no_wrap = True
        text.overflow = "ellipsis"
        super().__init__(Static(text))
        self.info = info


class SessionList(ListView):
    """Sessions of this workspace and profile, newest first."""

    DEFAULT_CSS = """
    SessionList { width: 30; border-right: solid $primary-background; }
    SessionList > SessionItem > Static { height: 2; width: 100%; }
    """

    def show(self, sessions: list[SessionInfo], current: str | None) -> None:
        self.clear()
        for info in sessions:
            self.append(SessionItem(info, info.id == current))
        # The cursor starts on the open session, so ↓ and Enter open the one before it.
        ids = [info.id for info in sessions]
        if current in ids:
            self.index = ids.index(current)
