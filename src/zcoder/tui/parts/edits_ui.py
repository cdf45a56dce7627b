"""/diff and /undo: the session's file changes, shown and taken back (agent/edits.py).

/diff adds one transcript entry: per file, the net change from before the agent first
edited it to what is on disk now, coloured, after a header of how many files and lines.
/undo (idle only) asks first in a guarded dialog listing each file and what will happen
to it, then restores the files the last turn that changed files left, and tells the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Final

from rich.text import Text

from zcoder.slash.declared import EditCommands
from zcoder.tools.offload import StopSignal, in_thread
from zcoder.tui.dialogs.edit import UNDO_CANCEL, UNDO_OVERWRITE
from zcoder.tui.parts.services import Part
from zcoder.tui.widgets.diff_view import diff_text
from zcoder.tui.widgets.transcript import Entry

if TYPE_CHECKING:
    from zcoder.agent.edits import UndoPlan

MAX_DIFF_ENTRY_LINES: Final = 2000
"""Lines of /diff shown in the transcript; a longer diff says how many more there are."""


@dataclass(eq=False)
class EditsUI(Part, EditCommands):
    """/diff and /undo. Takes, besides its context (the services' agent, None before the
    start has finished, and whether a turn runs), never the app: ``confirm_undo`` (the
    /undo dialog, tui/parts/approvals.py)."""

    _: KW_ONLY
    confirm_undo: Callable[[UndoPlan], Awaitable[str]]
    _asking: bool = field(default=False, init=False)  # an /undo dialog is open

    async def show_diff(self, _argument: str = "") -> None:
        agent = self.services.agent
        if agent is None:
            return
        # Reading every changed file and diffing it is file-system work: off the loop.
        diff = await in_thread(StopSignal(), agent.edits.session_diff, name="diff")
        if not diff.diffs:
            self.say.notice(
                "No file changes in this session to show (edits made by run_command are "
                "not tracked; undone ones are gone)."
            )
            return
        lines = [line for d in diff.diffs for line in d.lines]
        if len(lines) > MAX_DIFF_ENTRY_LINES:
            more = len(lines) - MAX_DIFF_ENTRY_LINES
            lines = [*lines[:MAX_DIFF_ENTRY_LINES], f"… {more} more lines not shown"]
        body = Text.assemble((diff.header + "\n", "bold"), diff_text("\n".join(lines)))
        self.say.show(Entry("diff", body))

    async def undo(self, _argument: str = "") -> None:
        agent = self.services.agent
        if agent is None:
            return
        if self.services.busy():
            self.say.notice("/undo runs when no turn is running; try again when this one ends.")
            return
        if self._asking:
            self.say.notice("An /undo is already waiting for your answer.")
            return
        journal = agent.edits
        # Reading and diffing the files is file-system work: off the loop, too.
        plan = await in_thread(StopSignal(), journal.plan_undo, name="undo-plan")
        if plan is None:
            self.say.notice(
                "Nothing to undo: no turn of this session changed files, or all were undone."
            )
            return
        session = journal.store  # replaced if another session is opened meanwhile
        self._asking = True
        try:
            answer = await self.confirm_undo(plan)
        finally:
            self._asking = False
        if answer == UNDO_CANCEL:
            self.say.notice("Nothing was undone.")
            return
        if self.services.busy():  # a relayed task may have started while the dialog was open
            self.say.notice(
                "A turn started meanwhile; nothing was undone. Try /undo again after it."
            )
            return
        if journal.store is not session:
            self.say.notice("Another session was opened meanwhile; nothing was undone.")
            return
        report = journal.undo(plan, overwrite_changed=answer == UNDO_OVERWRITE)
        agent.note_for_model(report.note_for_model(), report.text())
