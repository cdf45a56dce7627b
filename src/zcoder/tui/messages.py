"""What the parts of the TUI say to the screen: Textual messages, posted up, not calls.

The parts behind the screen (the model, the relay, the sessions, quitting, edits, slash
commands, turns, start-up) hold a ``Say``: a way to post a message. Notices and entries
go to the chat pane, which shows them in the transcript at once (tui/widgets/chat_pane.py); the
header's fields go to the header (tui/widgets/status.py); the rest bubble up from the chat pane
to the main screen (tui/main_screen.py), which puts each where it belongs: a changed
model in the session store and the relay's manifest, a nudge from the relay to what runs
next. (The screen's own queue waits behind its layout, so what must show at once is not
routed through it.) A part that only posts needs no app to be tested, and may post from
any thread (``post_message`` is Textual's one thread-safe way in).

Messages to one receiver are handled in the order they were posted, so what a part says
reaches the transcript in the order it said it. A turn's start and end change the header
at once, by the screen's call (it owns the header); a change a part posts that must not
undo them (a warm-up's end saying Ready) is marked ``idle_only`` and is dropped when it
arrives while a turn runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from zcoder.tui.widgets.transcript import Entry

__all__ = [
    "HeaderFields",
    "ModelChanged",
    "PromptFocused",
    "RelayNudge",
    "RunNext",
    "Say",
    "SessionOpened",
    "ShowEntry",
    "ShowNotice",
    "TurnStarted",
]


# Messages that carry values are dataclasses: Textual's Message runs its own set-up from
# ``__post_init__`` for them.


@dataclass
class ShowNotice(Message):
    """A line for the transcript: a notice, or (``error``) an error."""

    text: str
    error: bool = field(default=False, kw_only=True)


@dataclass
class ShowEntry(Message):
    """An entry made by a part (a diff, a receipt) for the transcript."""

    entry: Entry


@dataclass
class HeaderFields(Message):
    """Fields of the header changed (tui/widgets/status.py: ``HeaderBar``'s reactives).
    ``idle_only``: dropped if a turn runs when it arrives."""

    changes: dict[str, Any]
    idle_only: bool = field(default=False, kw_only=True)


@dataclass
class ModelChanged(Message):
    """The model in use is now ``model`` (``/model``, the picker, a resumed session's)."""

    model: str


@dataclass
class SessionOpened(Message):
    """``session_id`` is open now; ``shown`` is the mounting of its saved entries."""

    session_id: str
    shown: Awaitable[object] | None


class TurnStarted(Message):
    """A turn's worker started (the chat pane's; ``ChatPane.TurnEnded`` says it ended)."""


class RunNext(Message):
    """Something may run now (a relayed task came, the relay resumed, the user acted):
    the screen starts the next turn the scheduler names, when idle."""


class PromptFocused(Message):
    """The first stage of start-up gave the prompt the focus: the app's driver may read
    the keys typed so far (tui/terminal.py, ZcoderDriver.take_keys)."""


class RelayNudge(Message):
    """Posted from the relay's listener thread: a message was queued, or the relay's
    state changed."""


@dataclass(frozen=True)
class Say:
    """What a part holds to speak to the screen: ``post`` is a ``post_message``."""

    post: Callable[[Message], object]
    post_header: Callable[[Message], object] | None = None
    """Where ``HeaderFields`` go (the header itself); ``post`` when None."""

    def notice(self, text: str) -> None:
        self.post(ShowNotice(text))

    def error(self, text: str) -> None:
        self.post(ShowNotice(text, error=True))

    def show(self, entry: Entry) -> None:
        self.post(ShowEntry(entry))

    def header(self, *, idle_only: bool = False, **changes: Any) -> None:
        (self.post_header or self.post)(HeaderFields(changes, idle_only=idle_only))
