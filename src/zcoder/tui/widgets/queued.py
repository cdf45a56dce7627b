"""The user's waiting input, in a small strip above the prompt input.

Steering sent while a turn runs (Enter) waits here until the agent takes it at the
turn's next safe point; a follow-up (Ctrl+G) until its turn starts. Each is numbered as
/queue numbers it, with its kind, and marked held after a stop or a crash (then
``/queue resume`` runs it). Up in an empty input takes the newest one back to edit;
clearing the input then cancels it. The store is zcoder.frontend.pending's PendingInput.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from zcoder.frontend.pending import InputKind, PendingItem
from zcoder.tui.widgets.shared import screen_safe

MAX_SHOWN = 3
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"

# Short: one line each, within 60 columns (cut with … when narrower).
QUEUE_HINT = "↑ edits the last one · clear it to cancel · /queue lists"
HELD_HINT = "held · /queue resume runs · /queue drop N drops one"
EDIT_HINT = "editing · Enter sends it again · clear it to cancel"


def number(n: int) -> str:
    return _CIRCLED[n - 1] if 1 <= n <= len(_CIRCLED) else f"({n})"


def queue_text(items: Sequence[PendingItem], *, editing: bool) -> Text:
    """One line per waiting input (the first few), then what the keys do."""
    text = Text()
    for n, item in enumerate(items[:MAX_SHOWN], start=1):
        style = "bold yellow" if item.kind is InputKind.STEER else "bold"
        text.append(item.label, style=style)
        text.append(f" {number(n)} ")
        text.append(screen_safe(" ".join(item.text.split())) + "\n")
    if len(items) > MAX_SHOWN:
        text.append(f"… and {len(items) - MAX_SHOWN} more\n", style="dim")
    held = any(item.held for item in items)
    hint = EDIT_HINT if editing else HELD_HINT if held else QUEUE_HINT
    text.append(hint, style="dim italic")
    return text


class QueuedPrompts(Static):
    """Hidden while nothing waits or is being edited."""

    DEFAULT_CSS = """
    QueuedPrompts {
        height: auto; max-height: 5; padding: 0 1; color: $text-muted; display: none;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.plain = ""  # what the strip says, for tests

    def show_queue(self, items: Sequence[PendingItem], *, editing: bool) -> None:
        self.display = bool(items) or editing
        text = queue_text(items, editing=editing) if self.display else Text()
        self.plain = text.plain
        self.update(text)
