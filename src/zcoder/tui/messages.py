"""What the parts of the TUI say to the screen: Textual messages, posted up, not calls.

The parts behind the screen (the model, the relay, the sessions, quitting, edits, slash
commands, turns, start-up) hold a ``Say``: a way to post a message. The main screen
(tui/main_screen.py) handles each message and puts it where it belongs: a notice in the
transcript, a field in the header, a changed model in the session store and the relay's
manifest. A part that only posts needs no app to be tested, and may post from any thread
(``post_message`` is Textual's one thread-safe way in).

Messages to one receiver are handled in the order they were posted, so what a part says
reaches the transcript in the order it said it. A turn's start and end change the header
at once, by the screen's call (it owns the header); a change a part posts that must not
undo them (a warm-up's end saying Ready) is marked ``idle_only`` and is dropped when it
arrives while a turn runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from zcoder.tui.transcript import Entry

__all__ = [
    "HeaderFields",
    "ModelChanged",
    "Notice",
    "RelayNudge",
    "RunNext",
    "Say",
    "SessionOpened",
    "ShowEntry",
    "TurnStarted",
]


class Notice(Message):
    """A line for the transcript: a notice, or (``error``) an error."""

    def __init__(self, text: str, *, error: bool = False) -> None:
        super().__init__()
        self.text = text
        self.error = error


class ShowEntry(Message):
    """An entry made by a part (a diff, a receipt) for the transcript."""

    def __init__(self, entry: Entry) -> None:
        super().__init__()
        self.entry = entry


class HeaderFields(Message):
    """Fields of the header changed (tui/status.py: ``HeaderBar``'s reactives).
    ``idle_only``: dropped if a turn runs when it arrives."""

    def __init__(self, changes: dict[str, Any], *, idle_only: bool = False) -> None:
        super().__init__()
        self.changes = changes
        self.idle_only = idle_only


class ModelChanged(Message):
    """The model in use is now ``model`` (``/model``, the picker, a resumed session's)."""

    def __init__(self, model: str) -> None:
        super().__init__()
        self.model = model


class SessionOpened(Message):
    """``session_id`` is open now; ``shown`` is the mounting of its saved entries."""

    def __init__(self, session_id: str, shown: Awaitable[object] | None) -> None:
        super().__init__()
        self.session_id = session_id
        self.shown = shown


class TurnStarted(Message):
    """A turn's worker started (the chat pane's; ``ChatPane.TurnEnded`` says it ended)."""


class RunNext(Message):
    """Something may run now (a relayed task came, the relay resumed, the user acted):
    the screen starts the next turn the scheduler names, when idle."""


class RelayNudge(Message):
    """Posted from the relay's listener thread: a message was queued, or the relay's
    state changed."""


@dataclass(frozen=True)
class Say:
    """What a part holds to speak to the screen: ``post`` is a ``post_message``."""

    post: Callable[[Message], object]

    def notice(self, text: str) -> None:
        self.post(Notice(text))

    def error(self, text: str) -> None:
        self.post(Notice(text, error=True))

    def show(self, entry: Entry) -> None:
        self.post(ShowEntry(entry))

    def header(self, *, idle_only: bool = False, **changes: Any) -> None:
        self.post(HeaderFields(changes, idle_only=idle_only))
