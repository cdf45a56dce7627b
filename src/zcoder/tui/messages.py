"""What the parts of the TUI say to the screen: Textual messages, posted up, not calls.

The parts behind the screen (the model, the relay, the sessions, quitting, edits, slash
commands, start-up) used to call the app to put a line in the transcript or change the
header. They now hold a ``Say``: a way to post a message, and the header's one setter.
The app handles each message (``on_notice``, ``on_show_entry``) and puts it where it
belongs. A part that only posts needs no app to be tested, and may post from any thread
(``post_message`` is Textual's one thread-safe way in).

Messages to one receiver are handled in the order they were posted, so what a part says
reaches the transcript in the order it said it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from zcoder.tui.transcript import Entry

__all__ = ["Notice", "Say", "ShowEntry"]


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


@dataclass(frozen=True)
class Say:
    """What a part holds to speak to the screen: ``post`` is a ``post_message``;
    ``header`` changes fields of the header's state (``HeaderBar.refresh_state``).

    The header is changed by a call, not a message: the app changes it too as a turn
    starts and ends, and a change queued behind those would undo them (a warm-up's end,
    handled after a turn started, would say Ready through the turn)."""

    post: Callable[[Message], object]
    header: Callable[..., None]

    def notice(self, text: str) -> None:
        self.post(Notice(text))

    def error(self, text: str) -> None:
        self.post(Notice(text, error=True))

    def show(self, entry: Entry) -> None:
        self.post(ShowEntry(entry))
