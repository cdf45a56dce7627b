"""``/tasks`` as the TUI and an editor (ACP) both answer it: list the board, add a task, or
mark one done. One reading of the argument and one set of answers, made visible with the
front end's ``clean`` (the text comes from other agents and the user's scripts).

Blocking (SQLite, file locks): the front ends call ``answer`` off their event loops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from zcoder.board import render
from zcoder.board.records import State, TaskRefused
from zcoder.board.store import Board, parse_task_id

USAGE: Final = "usage: /tasks, /tasks add TITLE, or /tasks done N"
EMPTY: Final = "The task board of this repository is empty: /tasks add TITLE adds one."
AUTHOR: Final = "user"
"""Who /tasks acts as on the board: the person at the front end."""


def parse_tasks_argument(argument: str) -> tuple[str, str]:
    """``/tasks``'s argument as (action, rest): action ``""`` (list), ``add`` or ``done``;
    TaskRefused with the usage for any other (a missing title or id is the board's to
    refuse, in its words)."""
    action, _, rest = argument.strip().partition(" ")
    if action not in ("", "add", "done"):
        raise TaskRefused(USAGE)
    return action, rest.strip()


def answer(board: Board, action: str, rest: str, clean: Callable[[str], str]) -> str:
    """Carry out ``/tasks`` on ``board``; what to show. BoardError or TaskRefused (both
    say why) when the board cannot, or will not."""
    if action == "add":
        return "Added " + render.line(board.add(rest, author=AUTHOR), clean)
    if action == "done":
        task = board.settle(parse_task_id(rest), State.DONE, author=AUTHOR)
        return "Now " + render.line(task, clean)
    return render.listing(board.tasks(), clean, empty=EMPTY)
