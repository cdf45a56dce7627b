"""The model picker. The dialogs where a person approves something are in the other
modules of tui/dialogs/ (their base: tui/dialogs/guarded.py)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static

from zcoder.tui.widgets.shared import screen_safe

DIALOG_CSS = """
ModelPicker { align: center middle; }
.dialog { width: 90%; max-width: 110; height: auto; max-height: 90%;
          border: thick $warning; background: $panel; padding: 1 2; }
.dialog .title { text-style: bold; margin-bottom: 1; }
.dialog .command { background: $boost; padding: 0 1; margin-bottom: 1; }
.dialog .keys { color: $text-muted; }
"""


class ModelPicker(ModalScreen[str | None]):
    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, models: list[str], current: str) -> None:
        super().__init__()
        self.models = models
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(
                Text("Choose a model (Enter), Esc to keep " + self.current), classes="title"
            )
            # Text, not str: a str prompt is parsed as markup, and names come from Ollama.
            yield OptionList(*(Text(screen_safe(name)) for name in self.models))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.current in self.models:
            options.highlighted = self.models.index(self.current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.models[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
