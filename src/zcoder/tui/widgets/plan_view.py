"""The model's plan on screen (zcoder.tools.plan): the sidebar's live checklist
(``PlanView``) and, in the transcript, each ``update_plan`` call as the checklist it made
(``PlanEntry``), one line where the transcript is narrow.

The item texts come from the model: they are drawn as plain ``rich.text.Text`` made
visible (``Plan``'s own rendering and ``visible``), never as markup.
"""

from __future__ import annotations

from typing import Any, Final

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from zcoder.agent.headings import TASK_TOOL
from zcoder.base.sanitize import visible
from zcoder.tools.plan import UPDATE_PLAN_TOOL, Plan, PlanError, PlanStatus
from zcoder.tui.widgets.entries import ToolEntry
from zcoder.tui.widgets.shared import SidebarSection
from zcoder.tui.widgets.subagent_entry import SubagentEntry

__all__ = [
    "PLAN_ONE_LINE_BELOW",
    "SIDEBAR_STEPS",
    "PlanEntry",
    "PlanView",
    "plan_text",
    "tool_entry",
]

PLAN_ONE_LINE_BELOW: Final = 70
"""A transcript entry narrower than this many columns shows a plan on one line (``Plan
2/5 ✓ · now: write tests``); Ctrl+T shows it whole."""

_GLYPHS: Final = {PlanStatus.DONE: "✓", PlanStatus.IN_PROGRESS: "▸", PlanStatus.PENDING: "○"}
_STYLES: Final = {PlanStatus.DONE: "dim", PlanStatus.IN_PROGRESS: "bold", PlanStatus.PENDING: ""}
DONE: Final = PlanStatus.DONE


SIDEBAR_STEPS: Final = 8
"""A plan longer than this shows its done steps in the sidebar as one line (``✓ 5
done``), so what is in progress and next stays in sight; the transcript has them all."""


def plan_text(plan: Plan, *, fold_done: bool = False) -> Text:
    """The checklist: a glyph per item (✓ done, ▸ in progress, ○ pending), then its text;
    ``fold_done``: the done ones as one line, first."""
    items = list(plan.items)
    lines = [Text(f"{_GLYPHS[i.status]} {visible(i.text)}", style=_STYLES[i.status]) for i in items]
    if fold_done and plan.done:
        left = [line for line, item in zip(lines, items, strict=True) if item.status is not DONE]
        lines = [Text(f"{_GLYPHS[DONE]} {plan.done} done", style=_STYLES[DONE]), *left]
    return Text("\n").join(lines)


def _hanging(checklist: Text) -> Table:
    """``checklist``'s lines with each one's wrapped rows under its text, not its glyph."""
    grid = Table.grid()
    grid.add_column(width=2, no_wrap=True)
    grid.add_column()
    for line in checklist.split("\n"):
        grid.add_row(line[:2], line[2:])
    return grid


class PlanView(SidebarSection):
    """The sidebar's section under the sessions: the plan as it is now; hidden while
    there is none."""

    DEFAULT_CSS = "PlanView { max-height: 60%; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.plan = Plan()

    def show_plan(self, plan: Plan) -> None:
        self.plan = plan
        if plan:
            head = Text(f"Plan · {plan.progress()}", style="bold")
            fold = len(plan.items) > SIDEBAR_STEPS
            self.update(Group(head, _hanging(plan_text(plan, fold_done=fold))))
        self.set_class(bool(plan), "shown")


class _OneLineWhenNarrow:
    """A Rich renderable: ``whole`` where there are PLAN_ONE_LINE_BELOW columns or more,
    else ``one_line``. Textual sizes an entry by rendering it at its width, so the
    entry's height follows the choice, as the terminal is resized too."""

    def __init__(self, one_line: Text, whole: Text) -> None:
        self.one_line, self.whole = one_line, whole

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.one_line if options.max_width < PLAN_ONE_LINE_BELOW else self.whole


class PlanEntry(ToolEntry):
    """An update_plan call: once it went through, the checklist it made (one line when
    the entry is narrow); a refused call is shown as any failed tool call."""

    def __init__(self, arguments: dict[str, Any], status: str = "running") -> None:
        self.plan: Plan | None = None
        super().__init__(UPDATE_PLAN_TOOL, arguments, status)

    def finish(self, status: str, result: str, diff: str = "") -> None:
        super().finish(status, result, diff)
        if status != "completed":
            return
        try:
            self.plan = Plan.from_arguments(self.arguments.get("items"))
        except PlanError:
            return
        head = self.plan.one_line()
        one_line = Text(head, style="bold", no_wrap=True, overflow="ellipsis")
        whole = (
            Text.assemble((head + "\n", "bold"), plan_text(self.plan)) if self.plan else one_line
        )
        self.plain = whole.plain
        self.update(_OneLineWhenNarrow(one_line, whole))


def tool_entry(name: str, arguments: dict[str, Any], status: str = "running") -> ToolEntry:
    """The transcript entry of a tool call other than a command."""
    if name == UPDATE_PLAN_TOOL:
        return PlanEntry(arguments, status)
    if name == TASK_TOOL:
        return SubagentEntry(arguments, status)
    return ToolEntry(name, arguments, status)
