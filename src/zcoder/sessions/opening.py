"""Opening the store's SQLite file, and saying what went wrong with it.

Kept apart from the queries because it is the one place that decides whether a file may be
touched at all (a newer schema, a foreign or damaged database are left exactly as found) and
the one place that turns SQLite's errors into messages that name the file and what to do.
"""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from zcoder.sessions.errors import (
    SessionStoreError,
    StoreCorruptError,
    StoreLockedError,
    StoreVersionError,
)
from zcoder.sessions.schema import MIGRATIONS, SCHEMA_VERSION, migrate, read_version

OPEN_RETRY_PAUSE_S = 0.02  # between attempts to set up a brand-new store another process holds


def is_busy(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def rollback_quietly(conn: sqlite3.Connection) -> None:
    """End a failed transaction; a failing rollback must not hide the error that led here."""
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


@contextmanager
def begun(conn: sqlite3.Connection, *, write: bool) -> Iterator[sqlite3.Connection]:
    """One transaction on ``conn`` (``BEGIN IMMEDIATE`` to write, so a writer waits for
    the others at its start, never halfway): committed when the block ends, rolled back
    when it fails. The session store and the task board (zcoder.board) write this way."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield conn
        conn.execute("COMMIT")
    finally:
        rollback_quietly(conn)


@dataclass(frozen=True)
class StoreFile:
    """The database file and how long to wait for other processes holding it."""

    path: Path
    busy_timeout_ms: int

    def connect(self) -> sqlite3.Connection:
        # mode=rw: SQLite must never create the file itself (it would ignore our 0600).
        uri = "file:" + urllib.parse.quote(os.fsencode(self.path)) + "?mode=rw"
        try:
            conn = sqlite3.connect(
                uri,
                uri=True,
                timeout=self.busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise self.translate(exc, "opening it") from exc
        try:
            self._prepare(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Check and set up a fresh connection, retrying while other processes do the same.

        While a brand-new file is still in rollback-journal mode, two processes switching it
        to WAL or creating the schema can deadlock; SQLite then fails one at once instead of
        waiting, so that one waits here and tries again, until the busy timeout.
        """
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        while True:
            try:
                self._prepare_once(conn)
                return
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() >= deadline:
                    raise self.translate(exc, "opening it") from exc
            except sqlite3.Error as exc:
                raise self.translate(exc, "opening it") from exc
            finally:
                rollback_quietly(conn)
            time.sleep(OPEN_RETRY_PAUSE_S)

    def _prepare_once(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms):d}")
        # Read before anything can write, so a damaged or foreign file is left untouched;
        # in one snapshot, so a zcoder creating the schema meanwhile is seen whole or not.
        conn.execute("BEGIN")
        version = read_version(conn)
        (objects,) = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        conn.execute("COMMIT")
        if version > SCHEMA_VERSION:
            raise StoreVersionError(
                self.path,
                f"The session store {self.path} was written by a newer zcoder (schema "
                f"version {version}; this zcoder knows up to {SCHEMA_VERSION}). Upgrade "
                "zcoder, or set ZCODER_HOME to another directory. The file was not changed.",
            )
        if version == 0 and objects:
            raise StoreCorruptError(
                self.path,
                f"{self.path} is an SQLite database but not a zcoder session store. "
                "It was not changed. Move it aside or set ZCODER_HOME to another directory.",
            )
        conn.execute("PRAGMA journal_mode = WAL")
        # WAL + NORMAL: a crash of the process loses nothing; a power cut may lose the
        # last transactions but never corrupts the file.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            found = migrate(conn, MIGRATIONS)
            if found > SCHEMA_VERSION:  # a newer zcoder got there in between
                raise StoreVersionError(
                    self.path,
                    f"The session store {self.path} was just upgraded by a newer zcoder "
                    f"(schema version {found}). Upgrade this zcoder.",
                )
            conn.execute("COMMIT")

    def translate(self, exc: sqlite3.Error, doing: str) -> SessionStoreError:
        name = getattr(exc, "sqlite_errorname", "") or ""
        detail = str(exc)
        if is_busy(exc):
            return StoreLockedError(
                self.path,
                f"The session store {self.path} is locked by another program; gave up after "
                f"{self.busy_timeout_ms / 1000:g} s while {doing}. Close the other program "
                "(another zcoder, or an sqlite3 shell) or try again.",
            )
        if (
            name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT"))
            or "not a database" in detail
            or "malformed" in detail
        ):
            return StoreCorruptError(
                self.path,
                f"The session store {self.path} is damaged or not a zcoder session store "
                f"({detail}). It was left untouched. Move it aside (mv {self.path} "
                f"{self.path}.broken) and zcoder will start a new one, or set ZCODER_HOME "
                "to another directory.",
            )
        return SessionStoreError(
            self.path,
            f"The session store {self.path} failed while {doing}: {detail}. Check that you "
            "can read and write the file and its directory, and that the disk is not full.",
        )
