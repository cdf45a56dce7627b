"""Small shared pieces of the UI: ``content_text`` and the sessions list; ``screen_safe``
(zcoder.base.sanitize's, as every front end's) is re-exported here.

The header is tui/widgets/status.py, the transcript tui/widgets/transcript.py, the prompt
tui/widgets/prompt.py.

All text from the model, tools and peers is rendered as plain ``rich.text.Text``, never as
markup, and passes ``screen_safe`` first: Rich drops only a few control characters (BEL,
CR...) and lets ESC through, so without it a relayed task, a model reply or a command's
output could write escape sequences to the terminal (clear it, retitle it, hide text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from rich.text import Text
from textual import events
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import ListItem, ListView, Static

from zcoder.base.blank_runs import blank_runs
from zcoder.base.sanitize import screen_safe
from zcoder.sessions import shown_title

if TYPE_CHECKING:
    from zcoder.sessions import SessionInfo

__all__ = [
    "SIDEBAR_MIN_TERMINAL_WIDTH",
    "Body",
    "SessionItem",
    "SessionList",
    "SideColumn",
    "SidebarPlaceholder",
    "SidebarSection",
    "content_text",
    "screen_safe",  # zcoder.base.sanitize's, the one for every front end
]


def content_text(text: str, prefix: str = "") -> Text:
    """What a dialog shows of ``text``: every character accounted for, nothing hidden.

    Control and invisible characters become visible escapes (``screen_safe``); runs of
    blanks and of empty lines become a marker that says how many there were
    (zcoder.base.blank_runs).
    """
    out = Text(prefix, no_wrap=False, overflow="fold")
    for piece, marker in blank_runs(screen_safe(text)):
        out.append(piece, style="bold reverse" if marker else "")
    return out


class SessionItem(ListItem):
    """Two rows: the title, then the id (``zcoder --resume ID`` reopens it).

    Each row is a widget of its own, one line high, so a long title ends in "…" on its row
    and never pushes the id out of the item (a Static drops a Text's own no_wrap)."""

    DEFAULT_CSS = """
    SessionItem > Static { height: 1; width: 100%; text-wrap: nowrap; text-overflow: ellipsis; }
    SessionItem > .session-id { color: $text-muted; }
    """

    def __init__(self, info: SessionInfo, current: bool) -> None:
        marker = "● " if current else "  "
        title = Static(Text(marker + screen_safe(shown_title(info.title))), classes="session-title")
        super().__init__(title, Static(Text("  " + info.id), classes="session-id"))
        self.info = info


class SidebarPlaceholder(Static):
    """What the sessions list looks like while it is still empty, in the first frame.

    The list (a ListView) costs about 30 ms of the first frame to mount and style, and it
    has nothing to show before the session store is open (the second stage of start-up,
    tui/parts/startup.py), which puts the real list in its place."""

    DEFAULT_CSS = """
    SidebarPlaceholder {
        width: 30; height: 1fr; background: $surface; border-right: solid $primary-background;
    }
    """


class SidebarSection(Static):
    """A section of the sidebar under the sessions (the plan, the task board): framed,
    scrolled when long, hidden until it has something to show (the ``shown`` class)."""

    DEFAULT_CSS = """
    SidebarSection {
        width: 30; height: auto; overflow-y: auto; display: none;
        padding: 0 1;
        border-top: solid $primary-background; border-right: solid $primary-background;
        background: $surface;
    }
    SidebarSection.shown { display: block; }
    """


class SideColumn(Vertical):
    """The sidebar: the sessions list (its placeholder in the first frame), and under it
    the model's plan while there is one (tui/widgets/plan_view.py)."""

    DEFAULT_CSS = """
    SideColumn { width: 30; height: 1fr; }
    SideColumn > SessionList { height: 1fr; }
    """


SIDEBAR_MIN_TERMINAL_WIDTH: Final = 80
"""Narrower than this many columns, the sessions sidebar (30 columns) hides itself, so the
transcript keeps at least 50; it comes back when the terminal is wide enough again. Ctrl+B
or /sessions shows it anyway, and /sessions lists the sessions and their ids."""


class Body(Horizontal):
    """The sidebar and the main column; it decides whether the sidebar is shown.

    Shown when the terminal is at least ``SIDEBAR_MIN_TERMINAL_WIDTH`` wide, unless the
    user hid it (Ctrl+B); when narrower, hidden unless the user asked for it (Ctrl+B,
    /sessions) since it became narrow. The sidebar is the first child (a SideColumn).
    """

    class SidebarHidden(Message):
        """The sidebar was hidden while it had the focus: the focus needs a new home."""

    narrow: reactive[bool] = reactive(False)
    hidden_by_user = reactive(False)  # Ctrl+B while wide
    shown_anyway = reactive(False)  # Ctrl+B or /sessions while narrow

    def on_resize(self, event: events.Resize) -> None:
        self.narrow = event.size.width < SIDEBAR_MIN_TERMINAL_WIDTH

    def watch_narrow(self, narrow: bool) -> None:
        if not narrow:
            self.shown_anyway = False  # the next narrow spell hides it again
        self._apply()

    def watch_hidden_by_user(self) -> None:
        self._apply()

    def watch_shown_anyway(self) -> None:
        self._apply()

    @property
    def sidebar_wanted(self) -> bool:
        return self.shown_anyway if self.narrow else not self.hidden_by_user

    def toggle_sidebar(self) -> None:
        """Ctrl+B: hide it if shown, show it if hidden (whatever the width)."""
        if self.narrow:
            self.shown_anyway = not self.shown_anyway
        else:
            self.hidden_by_user = not self.hidden_by_user

    def show_sidebar(self) -> None:
        if self.narrow:
            self.shown_anyway = True
        else:
            self.hidden_by_user = False

    def _apply(self) -> None:
        if not self.children:
            return
        sidebar = self.children[0]
        sidebar.display = self.sidebar_wanted
        if not sidebar.display and sidebar.has_focus_within:
            self.post_message(self.SidebarHidden())


class SessionList(ListView):
    """Sessions of this workspace and profile, newest first."""

    DEFAULT_CSS = """
    SessionList { width: 30; border-right: solid $primary-background; }
    """

    class LeftForPrompt(Message):
        """Typing (or Escape) reached the list: it belongs in the prompt. ``text`` is the
        character typed, to be put there ("" for Escape)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def on_key(self, event: events.Key) -> None:
        # ↑ ↓ Enter choose a session here; anything typed would otherwise be lost.
        if event.key == "escape" or (event.is_printable and event.character):
            event.stop()
            event.prevent_default()
            text = "" if event.key == "escape" else (event.character or "")
            self.post_message(self.LeftForPrompt(text))

    def show(self, sessions: list[SessionInfo], current: str | None) -> None:
        self.clear()
        for info in sessions:
            self.append(SessionItem(info, info.id == current))
        # The cursor starts on the open session, so ↓ and Enter open the one before it.
        ids = [info.id for info in sessions]
        if current in ids:
            self.index = ids.index(current)
