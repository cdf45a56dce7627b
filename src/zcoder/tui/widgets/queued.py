"""The user's queued prompts, in a small strip above the prompt input.

A prompt submitted while a turn runs waits here (the TurnScheduler keeps the queue); it
enters the transcript when its turn starts. Up in an empty input takes the newest one back
to edit; clearing the input then cancels it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from zcoder.tui.widgets.shared import screen_safe

MAX_SHOWN = 3
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"

# Short: one line each, as wide as the input (cut with … when narrower).
QUEUE_HINT = "↑ edits the last one · clear it to cancel · Esc stops the turn only"
EDIT_HINT = "editing a queued prompt · Enter queues it again · clear it to cancel"


def number(n: int) -> str:
    return _CIRCLED[n - 1] if 1 <= n <= len(_CIRCLED) else f"({n})"


def queue_text(prompts: Sequence[str], *, editing: bool) -> Text:
    """One line per queued prompt (the first few), then what the keys do."""
    text = Text()
    for n, prompt in enumerate(prompts[:MAX_SHOWN], start=1):
        text.append("queued ", style="bold")
        text.append(f"{number(n)} ")
        text.append(screen_safe(" ".join(prompt.split())) + "\n")
    if len(prompts) > MAX_SHOWN:
        text.append(f"… and {len(prompts) - MAX_SHOWN} more\n", style="dim")
    text.append(EDIT_HINT if editing else QUEUE_HINT, style="dim italic")
    return text


class QueuedPrompts(Static):
    """Hidden while nothing is queued or being edited."""

    DEFAULT_CSS = """
    QueuedPrompts {
        height: auto; max-height: 5; padding: 0 1; color: $text-muted; display: none;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.plain = ""  # what the strip says, for tests

    def show_queue(self, prompts: Sequence[str], *, editing: bool) -> None:
        self.display = bool(prompts) or editing
        text = queue_text(prompts, editing=editing) if self.display else Text()
        self.plain = text.plain
        self.update(text)
