"""The board of one repository: tasks added, claimed, settled, and read as they stand.

A claim is two things: the task's kernel lock, held by the claiming process
(zcoder.board.locks), and the row saying who claimed it. The lock comes first, taken
without waiting; then one ``BEGIN IMMEDIATE`` transaction checks that the task is open
and its dependencies done and writes the row, with the claim's *generation* (a counter
bumped by every claim). Settling a claim writes the row first and lets the lock go
after. So a row that says ``claimed`` while its lock is free belongs to a process that
died: readers take it as open, and ``tasks`` sweeps it (in a transaction that changes
the row only if its generation is still the dead claim's, so a claim made meanwhile is
never undone). Nothing waits on a clock: the kernel says who is alive.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from zcoder.base.safefile import ensure_private_dir
from zcoder.board import locks
from zcoder.board.database import BoardFile
from zcoder.board.location import board_dir, repository_of
from zcoder.board.records import (
    BOUNDS,
    BoardError,
    Claimant,
    Note,
    State,
    Task,
    TaskRefused,
    checked_text,
)

BOARD_FILE: Final = "board.sqlite3"
CONTENDED_TRIES: Final = 5
"""Attempts at a lock another process holds for an instant (a probe, a claim being
written) before the task is taken as claimed."""
CONTENDED_PAUSE_S: Final = 0.002

_COLUMNS: Final = (
    "id, title, description, state, claimant, instance, pid, generation, created_by, "
    "created_at, updated_at"
)


class Claim:
    """A task this process claimed: the lock it holds, and the claim's generation."""

    def __init__(self, board: Board, lock: locks.TaskLock, generation: int, task: Task) -> None:
        self.board = board
        self.lock = lock
        self.generation = generation
        self.task = task

    @property
    def task_id(self) -> int:
        return self.task.id

    def settle(self, state: State, note: str = "", author: str = "") -> Task:
        """End the claim: the task ``done``, ``failed`` or ``open`` again, with a note."""
        return self.board.settle_claim(self, state, note, author)


class Board:
    """A repository's task board (one SQLite file, one lock file per task)."""

    def __init__(self, directory: Path, *, repository: Path | None = None) -> None:
        self.directory = directory
        self.repository = repository or directory
        self.locks = directory / "locks"
        try:
            ensure_private_dir(self.locks)
        except OSError as exc:
            raise BoardError(f"cannot create the task board's directory {directory}: {exc}")
        self.path = directory / BOARD_FILE
        self.file = BoardFile(self.path)
        self._claims: dict[int, Claim] = {}
        self._guard = threading.Lock()
        self.writes = 0
        """Writes made through this object (SQLite's data_version counts only others')."""

    @classmethod
    def for_workspace(cls, home: Path, workspace: Path) -> Board:
        """The board of the repository holding ``workspace``."""
        repository = repository_of(workspace)
        return cls(board_dir(home, repository), repository=repository)

    def close(self) -> None:
        """Give back every claim this object holds (open again), then close the file."""
        for claim in list(self._claims.values()):
            try:
                claim.settle(State.OPEN, "its claimant stopped", claim.task.claimant or "")
            except BoardError:
                claim.lock.release()
        self.file.close()

    # -- reading ------------------------------------------------------------------------

    def tasks(self) -> list[Task]:
        """Every task as it stands, oldest first; dead claims are swept first."""
        self._sweep()
        with self.file.transaction("reading it", write=False) as conn:
            return self._read(conn, conn.execute(f"SELECT {_COLUMNS} FROM tasks ORDER BY id"))

    def task(self, task_id: int) -> Task:
        self._sweep((task_id,))
        with self.file.transaction("reading it", write=False) as conn:
            return self._one(conn, task_id)

    def held_claims(self) -> list[Claim]:
        """The claims this object holds, oldest first."""
        with self._guard:
            return sorted(self._claims.values(), key=lambda claim: claim.task_id)

    def claim_of(self, task_id: int) -> Claim | None:
        with self._guard:
            return self._claims.get(task_id)

    def change_mark(self) -> tuple[int, int, frozenset[int]]:
        """Changes as cheaply as they can be seen: other connections' commits, this one's,
        and which claims are alive (a claimant's death changes no file)."""
        with self.file.transaction("reading it", write=False) as conn:
            claimed = [
                row[0] for row in conn.execute("SELECT id FROM tasks WHERE state = 'claimed'")
            ]
        live = frozenset(i for i in claimed if locks.is_held(self.locks, i))
        return self.file.data_version(), self.writes, live

    # -- writing ------------------------------------------------------------------------

    def add(
        self, title: str, description: str = "", depends_on: Iterable[object] = (), *, author: str
    ) -> Task:
        """A new open task; its dependencies must be tasks of this board."""
        title = checked_text("title", title, BOUNDS.title)
        description = checked_text("description", description, BOUNDS.description, empty=True)
        author = checked_text("author", author or "unknown", BOUNDS.name)
        needs = sorted({parse_task_id(value) for value in depends_on})
        if len(needs) > BOUNDS.dependencies:
            raise TaskRefused(f"a task may depend on at most {BOUNDS.dependencies} tasks")
        now = time.time()
        with self.file.transaction("adding a task", write=True) as conn:
            (count,) = conn.execute("SELECT count(*) FROM tasks").fetchone()
            if count >= BOUNDS.tasks:
                raise TaskRefused(f"the board holds {BOUNDS.tasks:,} tasks, its limit")
            for need in needs:
                if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (need,)).fetchone() is None:
                    raise TaskRefused(f"no task #{need} to depend on; nothing was added")
            cursor = conn.execute(
                "INSERT INTO tasks (title, description, state, created_by, created_at, "
                "updated_at) VALUES (?, ?, 'open', ?, ?, ?)",
                (title, description, author, now, now),
            )
            task_id = int(cursor.lastrowid or 0)
            conn.executemany(
                "INSERT INTO dependencies (task, needs) VALUES (?, ?)",
                [(task_id, need) for need in needs],
            )
            self.writes += 1
            return self._one(conn, task_id)

    def note(self, task_id: int, text: str, *, author: str) -> Task:
        """Add a note to a task, whatever its state."""
        text = checked_text("note", text, BOUNDS.note)
        with self.file.transaction("adding a note", write=True) as conn:
            self._one(conn, task_id)
            self._add_note(conn, task_id, author, text)
            self.writes += 1
            return self._one(conn, task_id)

    def claim(self, task_id: int, claimant: Claimant) -> Claim:
        """Claim the task for this process; TaskRefused says why not (nothing changed)."""
        task_id = parse_task_id(task_id)
        _check_claimant(claimant)
        lock = self._take(task_id)
        if lock is None:
            task = self.task(task_id)
            if task.state is State.CLAIMED:
                raise TaskRefused(f"task #{task_id} is claimed by {_holder(task)}")
            if task.state is State.OPEN:
                raise TaskRefused(f"task #{task_id} is being claimed by another process")
            raise TaskRefused(f"task #{task_id} is {task.state.value}; it cannot be claimed")
        try:
            return self._claim_locked(lock, claimant)
        except BaseException:
            lock.release()
            raise

    def claim_next(self, claimant: Claimant) -> Claim | None:
        """Claim the oldest claimable task; None when none is."""
        _check_claimant(claimant)
        for task in self.tasks():
            if not task.claimable:
                continue
            lock = locks.take(self.locks, task.id)
            if lock is None:
                continue  # claimed this instant by another
            try:
                return self._claim_locked(lock, claimant)
            except TaskRefused:
                lock.release()  # settled meanwhile: try the next
            except BaseException:
                lock.release()
                raise
        return None

    def settle(self, task_id: int, state: State, note: str = "", *, author: str) -> Task:
        """Set a task no live process claims to ``state`` (a person's or a script's word:
        done, failed, or open again); TaskRefused while a live process claims it."""
        task_id = parse_task_id(task_id)
        if state is State.CLAIMED:
            raise TaskRefused("a task is claimed with claim, not settled so")
        own = self.claim_of(task_id)
        if own is not None:
            return own.settle(state, note, author)
        lock = self._take(task_id)
        if lock is None:
            task = self.task(task_id)
            raise TaskRefused(
                f"task #{task_id} is claimed by {_holder(task)}; it settles the task "
                "(or stop that process)"
            )
        try:
            with self.file.transaction("settling a task", write=True) as conn:
                self._one(conn, task_id)
                self._write_state(conn, task_id, state, note, author, claimed=False)
                self.writes += 1
                return self._one(conn, task_id)
        finally:
            lock.release()

    def settle_claim(self, claim: Claim, state: State, note: str, author: str) -> Task:
        if state is State.CLAIMED:
            raise TaskRefused("a claim settles as done, failed or open")
        if note:
            checked_text("note", note, BOUNDS.note)
        task_id = claim.task_id
        try:
            with self.file.transaction("settling a claim", write=True) as conn:
                changed = conn.execute(
                    "UPDATE tasks SET generation = generation WHERE id = ? AND generation = ? "
                    "AND state = 'claimed'",
                    (task_id, claim.generation),
                ).rowcount
                if not changed:
                    raise BoardError(f"task #{task_id} was changed by hand while claimed")
                self._write_state(conn, task_id, state, note, author or "unknown", claimed=True)
                self.writes += 1
                task = self._one(conn, task_id)
        finally:
            with self._guard:
                self._claims.pop(task_id, None)
            claim.lock.release()  # after the row: a free lock never meets a live row
        return task

    # -- inside ---------------------------------------------------------------------------

    def _take(self, task_id: int) -> locks.TaskLock | None:
        for attempt in range(CONTENDED_TRIES):
            lock = locks.take(self.locks, task_id)
            if lock is not None:
                return lock
            if attempt + 1 < CONTENDED_TRIES:
                time.sleep(CONTENDED_PAUSE_S)
        return None

    def _claim_locked(self, lock: locks.TaskLock, claimant: Claimant) -> Claim:
        task_id = lock.task_id
        now = time.time()
        with self.file.transaction("claiming a task", write=True) as conn:
            task = self._one(conn, task_id, effective=False)
            if task.state in (State.DONE, State.FAILED):
                raise TaskRefused(f"task #{task_id} is {task.state.value}; it cannot be claimed")
            if task.waiting_on:
                waits = ", ".join(f"#{need}" for need in task.waiting_on)
                raise TaskRefused(f"task #{task_id} waits on {waits}, not done yet")
            if task.state is State.CLAIMED:  # we hold its lock: that claimant is gone
                self._add_note(conn, task_id, task.claimant or "", _gone(task))
            conn.execute(
                "UPDATE tasks SET state = 'claimed', claimant = ?, instance = ?, pid = ?, "
                "generation = generation + 1, updated_at = ? WHERE id = ?",
                (claimant.name, claimant.instance, os.getpid(), now, task_id),
            )
            (generation,) = conn.execute(
                "SELECT generation FROM tasks WHERE id = ?", (task_id,)
            ).fetchone()
            self.writes += 1
            claim = Claim(self, lock, int(generation), self._one(conn, task_id))
        with self._guard:
            self._claims[task_id] = claim
        return claim

    def _sweep(self, only: Sequence[int] | None = None) -> None:
        """Open again the tasks whose claimant died (their lock is free)."""
        with self.file.transaction("reading it", write=False) as conn:
            rows = conn.execute(
                "SELECT id, generation FROM tasks WHERE state = 'claimed'"
            ).fetchall()
        dead = [
            (int(task_id), int(generation))
            for task_id, generation in rows
            if (only is None or task_id in only) and not locks.is_held(self.locks, task_id)
        ]
        if not dead:
            return
        with self.file.transaction("opening dead claims", write=True) as conn:
            for task_id, generation in dead:
                task = self._one(conn, task_id, effective=False)
                changed = conn.execute(
                    "UPDATE tasks SET state = 'open', claimant = NULL, instance = NULL, "
                    "pid = NULL, updated_at = ? WHERE id = ? AND state = 'claimed' "
                    "AND generation = ?",
                    (time.time(), task_id, generation),
                ).rowcount
                if changed:  # else claimed again meanwhile: that claim is alive
                    self._add_note(conn, task_id, task.claimant or "", _gone(task))
            self.writes += 1

    def _write_state(
        self,
        conn: sqlite3.Connection,
        task_id: int,
        state: State,
        note: str,
        author: str,
        *,
        claimed: bool,
    ) -> None:
        keep = state is not State.OPEN  # done and failed keep who did it
        conn.execute(
            "UPDATE tasks SET state = ?, updated_at = ?, "
            "claimant = CASE WHEN ? THEN claimant ELSE NULL END, "
            "instance = CASE WHEN ? THEN instance ELSE NULL END, "
            "pid = CASE WHEN ? THEN pid ELSE NULL END WHERE id = ?",
            (
                state.value,
                time.time(),
                keep and claimed,
                keep and claimed,
                keep and claimed,
                task_id,
            ),
        )
        if note:
            self._add_note(conn, task_id, author, checked_text("note", note, BOUNDS.note))

    def _add_note(self, conn: sqlite3.Connection, task_id: int, author: str, text: str) -> None:
        conn.execute(
            "INSERT INTO notes (task, at, author, text) VALUES (?, ?, ?, ?)",
            (task_id, time.time(), author[: BOUNDS.name] or "unknown", text),
        )

    def _one(self, conn: sqlite3.Connection, task_id: int, *, effective: bool = True) -> Task:
        found = self._read(
            conn,
            conn.execute(f"SELECT {_COLUMNS} FROM tasks WHERE id = ?", (task_id,)),
            effective=effective,
        )
        if not found:
            raise TaskRefused(f"there is no task #{task_id} on this board")
        return found[0]

    def _read(
        self, conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]], *, effective: bool = True
    ) -> list[Task]:
        rows = list(rows)
        if not rows:
            return []
        ids = [row[0] for row in rows]
        marks = ",".join("?" * len(ids)) if len(ids) < 900 else None
        where = f"WHERE d.task IN ({marks})" if marks else ""
        params: tuple[int, ...] = tuple(ids) if marks else ()
        needs: dict[int, list[tuple[int, str]]] = {}
        for task, need, state in conn.execute(
            f"SELECT d.task, d.needs, t.state FROM dependencies d JOIN tasks t ON t.id = d.needs "
            f"{where} ORDER BY d.task, d.needs",
            params,
        ):
            needs.setdefault(task, []).append((need, state))
        notes: dict[int, list[Note]] = {}
        where = f"WHERE task IN ({marks})" if marks else ""
        for task, at, author, text in conn.execute(
            f"SELECT task, at, author, text FROM notes {where} ORDER BY id", params
        ):
            notes.setdefault(task, []).append(Note(at, author, text))
        return [_task(row, needs.get(row[0], []), notes.get(row[0], [])) for row in rows]


def _task(row: tuple[Any, ...], needs: list[tuple[int, str]], notes: list[Note]) -> Task:
    (task_id, title, description, state, claimant, instance, pid, _gen, by, created, updated) = row
    return Task(
        id=task_id,
        title=title,
        description=description,
        state=State(state),
        claimant=claimant,
        instance=instance,
        pid=pid,
        created_by=by,
        created_at=created,
        updated_at=updated,
        dependencies=tuple(need for need, _state in needs),
        waiting_on=tuple(need for need, need_state in needs if need_state != State.DONE.value),
        notes=tuple(notes),
    )


def parse_task_id(value: object) -> int:
    """A task id as given (``7``, ``"7"``, ``"#7"``); TaskRefused for anything else."""
    text = str(value).strip().removeprefix("#") if not isinstance(value, bool) else ""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif text.isascii() and text.isdigit() and len(text) <= 18:
        number = int(text)
    else:
        raise TaskRefused(f"{str(value)[:40]!r} is not a task id (a number, as listed)")
    if number <= 0 or number >= 2**62:
        raise TaskRefused(f"{number} is not a task id (a number, as listed)")
    return number


def _check_claimant(claimant: Claimant) -> None:
    checked_text("claimant's name", claimant.name, BOUNDS.name)
    checked_text("claimant's instance", claimant.instance, BOUNDS.name)


def _holder(task: Task) -> str:
    return f"{task.claimant} ({task.instance})" if task.claimant else "another process"


def _gone(task: Task) -> str:
    return f"the claim of {_holder(task)} ended with its process; the task was open again"
