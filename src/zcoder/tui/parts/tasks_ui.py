"""/tasks and the sidebar's task board section (tui/widgets/task_view.py).

The board is the repository's (zcoder.board), shared with every agent working in it;
this part opens it on first use, off the event loop. ``poll`` runs on the screen's timer:
in a thread it reads the board's change mark (SQLite's data_version and which claims are
alive: a claimant's death changes no file), and only when that moved reads the tasks
and redraws the section.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import KW_ONLY, dataclass, field
from functools import partial
from typing import Final

from zcoder.base.sanitize import visible
from zcoder.board import Board, BoardError, Task, TaskRefused, answer, parse_tasks_argument
from zcoder.slash.declared import TaskCommands
from zcoder.tui.parts.services import Part
from zcoder.tui.widgets.entries import Entry, system_text
from zcoder.tui.widgets.task_view import TaskView

__all__ = ["TASKS_POLL_SECONDS", "TasksUI"]

TASKS_POLL_SECONDS: Final = 1.0
"""How often the sidebar looks for a change of the board (a cheap read)."""


@dataclass(eq=False)
class TasksUI(Part, TaskCommands):
    _: KW_ONLY
    view: TaskView
    _board: Board | None = field(default=None, init=False)
    _mark: object = field(default=None, init=False)
    _looking: bool = field(default=False, init=False)
    _opening: threading.Lock = field(default_factory=threading.Lock, init=False)

    def _open(self) -> Board:
        with self._opening:  # a command's thread and the timer's may ask at once
            if self._board is None:
                config = self.services.config
                self._board = Board.for_workspace(config.home, config.workspace)
            return self._board

    def tasks_command(self, argument: str, /) -> None:
        try:
            action, rest = parse_tasks_argument(argument)
        except TaskRefused as exc:
            self.say.error(str(exc))
            return
        self.host.run_later(partial(self._carry_out, action, rest), group="tasks")

    async def _carry_out(self, action: str, rest: str) -> None:
        try:
            said = await asyncio.to_thread(lambda: answer(self._open(), action, rest, visible))
        except (BoardError, TaskRefused) as exc:
            self.say.error(str(exc))
            return
        self.say.show(Entry("system", system_text(said)))
        await self.look()

    def poll(self) -> None:
        """The screen's timer: look for a change (skipped while a look is under way)."""
        if not self._looking:
            self.host.run_later(self.look, group="tasks-poll")

    async def look(self) -> None:
        """Redraw the sidebar's section if the board changed since the last look."""
        self._looking = True
        try:
            tasks = await asyncio.to_thread(self._changed)
        except (BoardError, TaskRefused):
            return  # /tasks says what is wrong; the sidebar keeps what it showed
        finally:
            self._looking = False
        if tasks is not None:
            self.view.show_tasks(tasks)

    def _changed(self) -> list[Task] | None:
        board = self._open()
        mark = board.change_mark()
        if mark == self._mark:
            return None
        tasks = board.tasks()  # may sweep a dead claim: the mark after it is the one kept
        self._mark = board.change_mark()
        return tasks
