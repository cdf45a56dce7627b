"""Tasks as text and as JSON: one form for the CLI, the TUI, the model and MCP clients.

Every field a person or an agent typed is hostile text: ``clean`` makes it safe where it
goes (``visible`` for a terminal, ``field_for_model``/``body_for_model`` for a model).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from zcoder.base.plural import counted
from zcoder.base.sanitize import bounded
from zcoder.board.records import State, Task

Clean = Callable[[str], str]
MAX_LINE_TITLE = 80
"""Characters of a title a listing's line shows (the whole title is in the details)."""
NOTES_SHOWN = 5
"""The latest notes a task's details show."""


def status(task: Task, clean: Clean) -> str:
    """``open``, ``waits on #1, #2``, ``claimed by NAME``, ``done by NAME``..."""
    if task.state is State.OPEN and task.waiting_on:
        return "waits on " + ", ".join(f"#{need}" for need in task.waiting_on)
    if task.claimant and task.state is not State.OPEN:
        return f"{task.state.value} by {clean(task.claimant)}"
    return task.state.value


def line(task: Task, clean: Clean) -> str:
    """One task on one line: ``#3 open: title``."""
    return f"#{task.id} {status(task, clean)}: {clean(bounded(task.title, MAX_LINE_TITLE))}"


def listing(tasks: Sequence[Task], clean: Clean, *, empty: str = "The board is empty.") -> str:
    """Every task on its line, then a count by state."""
    if not tasks:
        return empty
    counts = [
        counted(sum(1 for t in tasks if t.state is state), state.value, state.value)
        for state in State
        if any(t.state is state for t in tasks)
    ]
    return "\n".join([*(line(task, clean) for task in tasks), ", ".join(counts)])


def details(task: Task, clean: Clean, body: Clean) -> str:
    """A task whole: its line, description, dependencies, claimant and latest notes."""
    parts = [f"#{task.id} {status(task, clean)}: {clean(task.title)}"]
    if task.description:
        parts.append(body(task.description))
    if task.dependencies:
        parts.append("after: " + ", ".join(f"#{need}" for need in task.dependencies))
    if task.claimant and task.state is State.CLAIMED:
        parts.append(f"claimant: {clean(task.claimant)} ({clean(task.instance or '')})")
    for note in task.notes[-NOTES_SHOWN:]:
        when = time.strftime("%H:%M", time.localtime(note.at))
        parts.append(f"note {when} {clean(note.author)}: {body(note.text)}")
    return "\n".join(parts)


def as_json(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "title": task.title,
        "description": task.description,
        "state": task.state.value,
        "claimable": task.claimable,
        "dependencies": list(task.dependencies),
        "waiting_on": list(task.waiting_on),
        "claimant": task.claimant,
        "instance": task.instance,
        "pid": task.pid,
        "created_by": task.created_by,
        "created_at": task.created_at,
        "updated_at": task.updated_at,
        "notes": [{"at": n.at, "author": n.author, "text": n.text} for n in task.notes],
    }
