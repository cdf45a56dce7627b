"""The prompt input: a multi-line TextArea where Enter submits."""

from __future__ import annotations

from functools import cached_property

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from zcoder.tui.prompt_habits import PromptHabits


class PromptInput(TextArea):
    """Multi-line input: Enter submits, Shift+Enter or Alt+Enter (or Ctrl+J) adds a newline."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 10; border: round $accent; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class EditQueued(Message):
        """Up in an empty input: take the last queued prompt back to edit it."""

    @cached_property
    def habits(self) -> PromptHabits:
        """Up/Down recall, Ctrl+R search, Tab completion (tui/prompt_habits.py)."""
        return PromptHabits(self)

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        self.habits.text_changed()  # a paste or an edit ends a search or Tab's listing

    async def _on_key(self, event: events.Key) -> None:
        if self.habits.handle_key(event):
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self.text))
            return
        if event.key in ("shift+enter", "alt+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)
