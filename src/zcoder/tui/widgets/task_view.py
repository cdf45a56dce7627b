"""The sidebar's task board section: the repository's tasks as they stand, updated when
the board changes (tui/parts/tasks_ui.py looks); hidden while the board is empty.

Titles and names are other agents' text: drawn as plain ``rich.text.Text`` made visible
(zcoder.board.render with ``visible``), never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich.console import Group
from rich.text import Text

from zcoder.base.sanitize import visible
from zcoder.board import State, Task, render
from zcoder.tui.widgets.shared import SidebarSection

__all__ = ["SIDEBAR_TASKS", "TaskView"]

SIDEBAR_TASKS: Final = 6
"""Tasks the sidebar shows: those claimed, then the claimable, then the waiting; done
and failed ones are counted only. /tasks lists them all."""
_ORDER: Final = {State.CLAIMED: 0, State.OPEN: 1}
_STYLES: Final = {State.CLAIMED: "bold", State.OPEN: ""}


class TaskView(SidebarSection):
    DEFAULT_CSS = "TaskView { max-height: 40%; }"

    plain = ""
    """What the section shows, as text (for tests and screen readers)."""

    def show_tasks(self, tasks: Sequence[Task]) -> None:
        live = sorted(
            (t for t in tasks if t.state in _ORDER),
            key=lambda t: (_ORDER[t.state], bool(t.waiting_on), t.id),
        )
        finished = len(tasks) - len(live)
        head = f"Tasks · {len(live)} to do" + (f", {finished} ended" if finished else "")
        lines = [
            Text(
                render.line(t, visible),
                style="dim" if t.waiting_on else _STYLES[t.state],
                no_wrap=True,
                overflow="ellipsis",
            )
            for t in live[:SIDEBAR_TASKS]
        ]
        if len(live) > SIDEBAR_TASKS:
            lines.append(Text(f"… {len(live) - SIDEBAR_TASKS} more: /tasks", style="dim"))
        self.plain = "\n".join([head, *(text.plain for text in lines)])
        self.update(Group(Text(head, style="bold"), *lines))
        self.set_class(bool(tasks), "shown")
