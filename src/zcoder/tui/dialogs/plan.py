"""The plan a plan-mode turn ended with, offered to the user to run (tui/parts/modes_ui.py).

A guarded dialog like the others (tui/dialogs/guarded.py): the whole plan is shown and
must have been seen before ``y`` runs it; ``n``, Enter and Escape keep planning.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

from zcoder.tools.modes import Mode
from zcoder.tui.dialogs.guarded import YesNoDialog

__all__ = ["PlanScreen"]


class PlanScreen(YesNoDialog):
    """y: leave plan mode for ``back`` and run the plan; n/Enter/Esc: keep planning."""

    ESC_HINT = "Esc keeps planning"

    def __init__(
        self, plan: str, back: Mode, *, give_back: Callable[[str], object] | None = None
    ) -> None:
        super().__init__(give_back=give_back)
        self.plan = plan
        self.back = back

    def title_text(self) -> Text:
        return Text("Run this plan?")

    def meta(self) -> list[Static]:
        note = f"y switches to {self.back.label} mode and runs it as your next prompt"
        return [Static(Text(note), classes="meta")]

    def body(self) -> str:
        return self.plan

    def keys_text(self) -> str:
        return "[y] run it   [N]/Esc/Enter keep planning"
