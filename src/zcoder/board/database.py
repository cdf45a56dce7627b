"""The board's SQLite file: opened private, in WAL with full sync, and its errors worded.

The one place that decides whether the file may be touched: a damaged or foreign file,
or one a newer zcoder wrote, is left exactly as found, and the error names it and says
what to do. Every write is one short ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from zcoder.base.safefile import PRIVATE_FILE_MODE
from zcoder.board.records import BoardError
from zcoder.sessions.opening import begun

SCHEMA_VERSION: Final = 1
BUSY_TIMEOUT_MS: Final = 10_000
"""How long a write waits for other processes' transactions (each a few milliseconds)."""

SCHEMA: Final = """
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('open', 'claimed', 'done', 'failed')),
    claimant TEXT,
    instance TEXT,
    pid INTEGER,
    generation INTEGER NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE dependencies (
    task INTEGER NOT NULL REFERENCES tasks (id),
    needs INTEGER NOT NULL REFERENCES tasks (id),
    PRIMARY KEY (task, needs)
);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    task INTEGER NOT NULL REFERENCES tasks (id),
    at REAL NOT NULL,
    author TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX notes_by_task ON notes (task, id);
"""


def create_private(path: Path) -> None:
    """``path`` made empty with mode 0600 unless it exists (never through a link)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
    finally:
        os.close(fd)


def translate(path: Path, exc: sqlite3.Error, doing: str) -> BoardError:
    detail = str(exc)
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "not a database" in detail:
        return BoardError(
            f"the task board {path} is damaged ({detail}); it was left as it is. Move it "
            f"aside (mv {path} {path}.broken) and a new board starts empty."
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in detail:
        return BoardError(
            f"the task board {path} stayed locked by another program for "
            f"{BUSY_TIMEOUT_MS / 1000:g} s while {doing}; try again"
        )
    return BoardError(f"the task board {path} failed while {doing}: {detail}")


class BoardFile:
    """One connection to the board's file, usable from any thread (calls take turns)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        create_private(path)
        uri = "file:" + urllib.parse.quote(os.fsencode(path)) + "?mode=rw"
        try:
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                uri,
                uri=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise translate(path, exc, "opening it") from exc
        try:
            self._prepare()
        except BaseException:
            self.close()
            raise

    def _prepare(self) -> None:
        conn = self._connection()
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
            with self.transaction("opening it", write=False) as reading:
                (version,) = reading.execute("PRAGMA user_version").fetchone()
                (objects,) = reading.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if version > SCHEMA_VERSION or (version == 0 and objects):
                raise BoardError(
                    f"{self.path} is not a task board this zcoder knows (schema version "
                    f"{version}); it was left as it is. Move it aside to start a new board."
                )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")  # a task added survives a power cut
            conn.execute("PRAGMA foreign_keys = ON")
            if version < SCHEMA_VERSION:
                with self.transaction("creating it", write=True) as writing:
                    (again,) = writing.execute("PRAGMA user_version").fetchone()
                    if again == 0:  # another process may have created it meanwhile
                        for statement in SCHEMA.split(";"):  # not executescript: it commits
                            if statement.strip():
                                writing.execute(statement)
                        writing.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
        except sqlite3.Error as exc:
            raise translate(self.path, exc, "opening it") from exc

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise BoardError(f"the task board {self.path} is closed")
        return self._conn

    @contextlib.contextmanager
    def _worded(self, doing: str) -> Iterator[None]:
        """SQLite's errors in the block said as BoardError: which file, what to do."""
        try:
            yield
        except sqlite3.Error as exc:
            raise translate(self.path, exc, doing) from exc

    @contextlib.contextmanager
    def transaction(self, doing: str, *, write: bool) -> Iterator[sqlite3.Connection]:
        """One transaction (``BEGIN IMMEDIATE`` to write), one thread at a time."""
        with self._lock, self._worded(doing), begun(self._connection(), write=write) as conn:
            yield conn

    def data_version(self) -> int:
        """Changes other connections committed since the last look (SQLite's counter)."""
        with self._lock, self._worded("reading it"):
            (version,) = self._connection().execute("PRAGMA data_version").fetchone()
            return int(version)

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()
