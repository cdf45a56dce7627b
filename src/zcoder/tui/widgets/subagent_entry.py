"""A subagent in the transcript: one entry for one ``task`` call, folded to a line.

Folded, it says the job's description, how it is going (its turns, the tokens its
requests cost, what it does now) and, once it ended, how. Unfolded (a click on it, or
SUBAGENTS_KEY for every subagent entry at once) it also lists each call the subagent
made and the first lines of its report; the full-output screen (Ctrl+T) has the whole
report. Everything in it came from a model: it is made screen-safe, never read as markup.
"""

from __future__ import annotations

from typing import Any, Final

from rich.text import Text
from textual import events

from zcoder.agent.headings import TASK_TOOL
from zcoder.base.plural import counted
from zcoder.tui.widgets.entries import ToolEntry
from zcoder.tui.widgets.shared import screen_safe

__all__ = ["SUBAGENTS_KEY", "SUBAGENTS_KEY_LABEL", "SubagentEntry"]

SUBAGENTS_KEY: Final = "ctrl+f"
SUBAGENTS_KEY_LABEL: Final = "Ctrl+F"
REPORT_LINES: Final = 20
"""Lines of the report an unfolded entry shows (Ctrl+T shows it whole)."""
_ICONS: Final = {"running": "…", "completed": "✓", "failed": "✗", "interrupted": "■"}
_QUIET_STEPS: Final = ("thinking", "writing")


class SubagentEntry(ToolEntry):
    """A task call: its subagent's progress, then its report."""

    DEFAULT_CSS = """
    SubagentEntry { border-left: thick $primary; }
    """

    def __init__(self, arguments: dict[str, Any], status: str = "running") -> None:
        self.unfolded = False
        self.turns = 0
        self.tokens = 0
        self.step = ""
        self.steps: list[str] = []
        self.report = ""
        super().__init__(TASK_TOOL, arguments, status)
        self._draw()

    def progress(self, step: str, turns: int, tokens: int) -> None:
        """The subagent moved on (SubagentProgress)."""
        self.step, self.turns, self.tokens = step, max(self.turns, turns), max(self.tokens, tokens)
        if step not in _QUIET_STEPS and (not self.steps or self.steps[-1] != f"· {step}"):
            self.steps.append(f"· {step}")
        self._draw()

    def take(self, metadata: dict[str, Any]) -> None:
        """What the finished call's result kept: its turns, tokens and calls."""
        self.turns = int(metadata.get("turns") or self.turns)
        self.tokens = int(metadata.get("tokens") or self.tokens)
        steps = str(metadata.get("steps") or "")
        if steps:
            self.steps = steps.split("\n")

    def finish(self, status: str, result: str, diff: str = "") -> None:
        super().finish(status, result, diff)
        self.report, self.step = result, ""
        self._draw()

    def toggle(self, unfolded: bool | None = None) -> None:
        self.unfolded = (not self.unfolded) if unfolded is None else unfolded
        self._draw()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.toggle()

    def _draw(self) -> None:
        status = self.command_status
        said = [status]
        if self.turns:
            said.append(counted(self.turns, "turn"))
        if self.tokens:
            said.append(f"{self.tokens:,} tokens")
        if status == "running" and self.step:
            said.append(self.step)
        description = str(self.arguments.get("description") or "subagent")
        kind = str(self.arguments.get("subagent_type") or "")
        head = f"Subagent{' ' + kind if kind else ''}: {' '.join(description.split())}"
        text = Text.assemble(
            ("▾ " if self.unfolded else "▸ ", "bold"),
            (f"{_ICONS.get(status, '·')} ", "bold"),
            (screen_safe(head[:200]), "bold"),
            (" — " + screen_safe(" · ".join(said)), "italic"),
        )
        if not self.unfolded:
            text.append(f" · {SUBAGENTS_KEY_LABEL}: unfold", style="dim")
            self.show_text(text)
            return
        for step in self.steps:
            text.append("\n  " + screen_safe(step[:300]))
        if self.report:
            lines = screen_safe(self.report).rstrip().split("\n")
            text.append("\nreport:", style="bold")
            text.append("\n" + "\n".join(lines[:REPORT_LINES]))
            if len(lines) > REPORT_LINES:
                more = counted(len(lines) - REPORT_LINES, "more line")
                text.append(f"\n… {more} · Ctrl+T: all of it", style="dim")
        self.show_text(text)
