"""The session store: one SQLite file, ``<home>/sessions.db``, shared by every zcoder process.

Threads: a store object owns one connection, opened with ``check_same_thread=False`` and
guarded by a lock, so any thread may call any method; calls are serialised. Processes: each
opens its own store; SQLite's WAL journal and a busy timeout let them write at once, and every
write is one short ``BEGIN IMMEDIATE`` transaction, so none is lost.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from zcoder.sessions import liveness
from zcoder.sessions.errors import (
    EventNotFoundError,
    SessionNotFoundError,
    SessionStoreError,
    StoreCorruptError,
    StoreLockedError,
    StoreVersionError,
)
from zcoder.sessions.paths import (
    STORE_FILE_NAME,
    canonical_workspace,
    create_private_file,
    ensure_private_dir,
    looseness_warning,
)
from zcoder.sessions.records import (
    EVENT_ROLES,
    STATUS_KEY,
    TOOL_INTERRUPTED,
    TOOL_RUNNING,
    EventRole,
    Message,
    Metadata,
    SessionData,
    SessionInfo,
    TranscriptEvent,
)
from zcoder.sessions.schema import MIGRATIONS, SCHEMA_VERSION, migrate, read_version
from zcoder.sessions.titles import DEFAULT_TITLE, title_from_user_message

DEFAULT_BUSY_TIMEOUT_MS = 5000
SESSION_ID_DIGITS = 5  # the random part of "1788012120_10392"
OPEN_RETRY_PAUSE_S = 0.02  # between attempts to set up a brand-new store another process holds
MAX_ID_ATTEMPTS = 32  # new ids tried before giving up; a clash is already one in 90,000

_SESSION_COLUMNS = "id, workspace, profile, model, title, created_at, updated_at, one_shot"


class _MalformedRow(Exception):
    """A row this code cannot decode: the file was damaged or edited by hand."""


def _enc(text: str) -> str:
    return json.dumps(text)


def _dec(stored: object) -> str:
    try:
        value = json.loads(cast(str, stored))
    except (TypeError, ValueError) as exc:
        raise _MalformedRow(f"text column holds {stored!r:.80}") from exc
    if not isinstance(value, str):
        raise _MalformedRow(f"text column holds {stored!r:.80}")
    return value


def _enc_doc(value: dict[str, Any], what: str) -> str:
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a dict, not {type(value).__name__}")
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{what} must hold JSON values only: {exc}") from exc


def _dec_doc(stored: object) -> dict[str, Any]:
    try:
        value = json.loads(cast(str, stored))
    except (TypeError, ValueError) as exc:
        raise _MalformedRow(f"JSON column holds {stored!r:.80}") from exc
    if not isinstance(value, dict):
        raise _MalformedRow(f"JSON column holds {stored!r:.80}")
    return cast(dict[str, Any], value)


def _is_busy(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def _rollback_quietly(conn: sqlite3.Connection) -> None:
    """End a failed transaction; a failing rollback must not hide the error that led here."""
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _new_session_id(now: float) -> str:
    low = 10 ** (SESSION_ID_DIGITS - 1)
    return f"{int(now)}_{low + secrets.randbelow(9 * low)}"


class SessionStore:
    """Saved sessions, scoped by canonical workspace and profile.

    Opening creates the home directory (0700) and the database file (0600) if missing and
    brings the schema up to date. Every failure of the file itself raises a
    :class:`SessionStoreError` naming the file; the file is never overwritten or removed.
    """

    def __init__(
        self,
        home: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.home = Path(home)
        self.path = self.home / STORE_FILE_NAME
        self.busy_timeout_ms = busy_timeout_ms
        self._clock = clock
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        try:
            ensure_private_dir(self.home)
            create_private_file(self.path)
        except OSError as exc:
            raise SessionStoreError(
                self.path,
                f"Cannot create the session store {self.path}: {exc}. "
                "Set ZCODER_HOME to a directory you can write.",
            ) from exc
        warnings = (looseness_warning(self.home), looseness_warning(self.path))
        self.warnings: tuple[str, ...] = tuple(w for w in warnings if w)
        """Notices for the user (e.g. a home readable by others); the store still works."""
        self._conn = self._connect()

    # -- opening -----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
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
            raise self._translate(exc, "opening it") from exc
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
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise self._translate(exc, "opening it") from exc
            except sqlite3.Error as exc:
                raise self._translate(exc, "opening it") from exc
            finally:
                _rollback_quietly(conn)
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

    # -- plumbing ----------------------------------------------------------------------

    def _translate(self, exc: sqlite3.Error, doing: str) -> SessionStoreError:
        name = getattr(exc, "sqlite_errorname", "") or ""
        detail = str(exc)
        if _is_busy(exc):
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

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise SessionStoreError(self.path, f"The session store {self.path} is closed.")
        return self._conn

    @contextmanager
    def _transaction(self, doing: str, *, write: bool) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                    conn.execute("COMMIT")
                finally:
                    _rollback_quietly(conn)
            except sqlite3.Error as exc:
                raise self._translate(exc, doing) from exc
            except _MalformedRow as exc:
                malformed = sqlite3.DatabaseError(f"malformed row: {exc}")
                raise self._translate(malformed, doing) from exc

    def _touch(self, conn: sqlite3.Connection, session_id: str) -> float:
        """Bump the session's updated time; raise if it does not exist."""
        now = self._clock()
        cursor = conn.execute(
            "UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?", (now, session_id)
        )
        if cursor.rowcount == 0:
            raise SessionNotFoundError(session_id)
        return now

    @staticmethod
    def _info(row: Sequence[Any]) -> SessionInfo:
        return SessionInfo(
            id=row[0],
            workspace=_dec(row[1]),
            profile=_dec(row[2]),
            model=_dec(row[3]),
            title=_dec(row[4]),
            created_at=row[5],
            updated_at=row[6],
            one_shot=bool(row[7]),
        )

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- sessions ----------------------------------------------------------------------

    def create_session(
        self,
        workspace: str | os.PathLike[str],
        profile: str,
        model: str,
        *,
        one_shot: bool = False,
    ) -> SessionInfo:
        """A new empty session titled "New Job", held by this process; ``one_shot``: made
        by ``zcoder --prompt``."""
        with self._transaction("creating a session", write=True) as conn:
            return self._insert_session(
                conn, canonical_workspace(workspace), profile, model, one_shot=one_shot
            )

    def _insert_session(
        self,
        conn: sqlite3.Connection,
        workspace: str,
        profile: str,
        model: str,
        *,
        one_shot: bool,
    ) -> SessionInfo:
        now = self._clock()
        me = liveness.current_stamp()
        for _ in range(MAX_ID_ATTEMPTS):
            session_id = _new_session_id(now)
            cursor = conn.execute(
                "INSERT OR IGNORE INTO sessions (id, workspace, profile, model, title,"
                " title_is_default, created_at, updated_at, holder_pid, holder_token, one_shot)"
                " VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    _enc(workspace),
                    _enc(profile),
                    _enc(model),
                    _enc(DEFAULT_TITLE),
                    now,
                    now,
                    me.pid,
                    me.token,
                    int(one_shot),
                ),
            )
            if cursor.rowcount == 1:
                return SessionInfo(
                    session_id, workspace, profile, model, DEFAULT_TITLE, now, now, one_shot
                )
        raise sqlite3.OperationalError("could not find an unused session id")

    def reuse_or_create(
        self,
        workspace: str | os.PathLike[str],
        profile: str,
        model: str,
        *,
        take: Callable[[str], bool] | None = None,
        one_shot: bool = False,
    ) -> SessionInfo:
        """The newest empty session of this scope, else a new one.

        Empty means no messages, no ledger entries and no events. An empty session held by
        another live zcoder process is not taken from it. The reused session gets ``model``
        and ``one_shot`` (made by ``zcoder --prompt``) and is held by this process.

        With ``take`` (e.g. taking the session's flock, zcoder.sessions.locks), ``take(id)``
        decides instead of the holder columns whether a candidate may be taken, and it is
        called for a new session's id too, all inside this write transaction: two processes
        can never be handed the same session.
        """
        ws = canonical_workspace(workspace)
        with self._transaction("starting a session", write=True) as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS}, holder_pid, holder_token FROM sessions s"
                " WHERE workspace = ? AND profile = ?"
                " AND NOT EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.id)"
                " AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)"
                " AND NOT EXISTS (SELECT 1 FROM user_ledger u WHERE u.session_id = s.id)"
                " ORDER BY updated_at DESC, id DESC",
                (_enc(ws), _enc(profile)),
            ).fetchall()
            me = liveness.current_stamp()
            for row in rows:
                holder_pid, holder_token = row[8], row[9]
                held_by_me = holder_pid == me.pid and holder_token == me.token
                if take is not None:
                    if not take(row[0]):
                        continue
                elif not held_by_me and liveness.is_alive(holder_pid, holder_token):
                    continue
                now = self._clock()
                conn.execute(
                    "UPDATE sessions SET model = ?, updated_at = max(updated_at, ?),"
                    " holder_pid = ?, holder_token = ?, one_shot = ? WHERE id = ?",
                    (_enc(model), now, me.pid, me.token, int(one_shot), row[0]),
                )
                reused = conn.execute(
                    f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (row[0],)
                ).fetchone()
                return self._info(reused)
            created = self._insert_session(conn, ws, profile, model, one_shot=one_shot)
            if take is not None and not take(created.id):
                raise sqlite3.OperationalError(f"could not take the new session {created.id}")
            return created

    def list_sessions(self, workspace: str | os.PathLike[str], profile: str) -> list[SessionInfo]:
        """Sessions of this workspace and profile, newest (last updated) first; one-shot
        ones too (``SessionInfo.one_shot`` says which)."""
        with self._transaction("listing sessions", write=False) as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE workspace = ? AND profile = ?"
                " ORDER BY updated_at DESC, id DESC",
                (_enc(canonical_workspace(workspace)), _enc(profile)),
            ).fetchall()
        return [self._info(row) for row in rows]

    def load(self, session_id: str, workspace: str | os.PathLike[str], profile: str) -> SessionData:
        """Everything saved for a session of this workspace and profile.

        Raises :class:`SessionNotFoundError` for an unknown id and for a session of another
        workspace or profile alike. Tool events left running by a process that has died are
        marked interrupted first (see :meth:`mark_interrupted_tools`).
        """
        ws = canonical_workspace(workspace)
        scope = (session_id, _enc(ws), _enc(profile))
        scoped = "SELECT 1 FROM sessions WHERE id = ? AND workspace = ? AND profile = ?"
        with self._transaction("loading a session", write=False) as conn:
            if conn.execute(scoped, scope).fetchone() is None:
                raise SessionNotFoundError(session_id, ws)
        self.mark_interrupted_tools(session_id)
        with self._transaction("loading a session", write=False) as conn:
            row = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions"
                " WHERE id = ? AND workspace = ? AND profile = ?",
                scope,
            ).fetchone()
            if row is None:
                raise SessionNotFoundError(session_id, ws)
            messages = [
                _dec_doc(body)
                for (body,) in conn.execute(
                    "SELECT body FROM messages WHERE session_id = ? ORDER BY position",
                    (session_id,),
                )
            ]
            ledger = [
                _dec(text)
                for (text,) in conn.execute(
                    "SELECT text FROM user_ledger WHERE session_id = ? ORDER BY position",
                    (session_id,),
                )
            ]
            events = [
                TranscriptEvent(
                    id=event_id,
                    session_id=session_id,
                    seq=seq,
                    role=role,
                    text=_dec(text),
                    metadata=_dec_doc(metadata),
                    created_at=created_at,
                )
                for event_id, seq, role, text, metadata, created_at in conn.execute(
                    "SELECT id, seq, role, text, metadata, created_at FROM events"
                    " WHERE session_id = ? ORDER BY seq",
                    (session_id,),
                )
            ]
        return SessionData(self._info(row), messages, ledger, events)

    def set_model(self, session_id: str, model: str) -> None:
        with self._transaction("saving the model", write=True) as conn:
            self._touch(conn, session_id)
            conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (_enc(model), session_id))

    def set_title_if_default(self, session_id: str, text: str) -> bool:
        """Title the session from ``text`` unless it already has a title; True if changed.

        Only for what the user typed: relayed and program-made text never titles a session.
        :meth:`record_user_message` calls this for you.
        """
        with self._transaction("saving the title", write=True) as conn:
            return self._set_title_if_default(conn, session_id, text)

    def _set_title_if_default(self, conn: sqlite3.Connection, session_id: str, text: str) -> bool:
        title = title_from_user_message(text)
        if not title:
            self._touch(conn, session_id)
            return False
        cursor = conn.execute(
            "UPDATE sessions SET title = ?, title_is_default = 0"
            " WHERE id = ? AND title_is_default = 1",
            (_enc(title), session_id),
        )
        self._touch(conn, session_id)
        return cursor.rowcount == 1

    # -- what the user typed -----------------------------------------------------------

    def record_user_message(
        self, session_id: str, text: str, metadata: Metadata | None = None
    ) -> int:
        """The user typed ``text``: add it to the exact-user ledger and the transcript (role
        "user"), and title the session from it if it has no title yet. One transaction.

        Returns the transcript event id. Relayed requests go through :meth:`append_event`
        with role "relay"; program-made context goes only into the messages.
        """
        with self._transaction("saving the user's message", write=True) as conn:
            self._set_title_if_default(conn, session_id, text)
            (position,) = conn.execute(
                "SELECT coalesce(max(position) + 1, 0) FROM user_ledger WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            conn.execute(
                "INSERT INTO user_ledger VALUES (?, ?, ?)", (session_id, position, _enc(text))
            )
            return self._insert_event(conn, session_id, "user", text, metadata or {})

    # -- transcript --------------------------------------------------------------------

    def append_event(
        self, session_id: str, role: EventRole, text: str, metadata: Metadata | None = None
    ) -> int:
        """Add a transcript event at the end of the session; returns its id."""
        with self._transaction("saving a transcript event", write=True) as conn:
            return self._insert_event(conn, session_id, role, text, metadata or {})

    def _insert_event(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        role: EventRole,
        text: str,
        metadata: Metadata,
    ) -> int:
        if role not in EVENT_ROLES:
            raise ValueError(f"unknown transcript role {role!r}; expected one of {EVENT_ROLES}")
        body = _enc_doc(metadata, "event metadata")
        now = self._touch(conn, session_id)
        (seq,) = conn.execute(
            "SELECT coalesce(max(seq) + 1, 1) FROM events WHERE session_id = ?", (session_id,)
        ).fetchone()
        me = liveness.current_stamp()
        cursor = conn.execute(
            "INSERT INTO events (session_id, seq, role, text, metadata, created_at,"
            " writer_pid, writer_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, seq, role, _enc(text), body, now, me.pid, me.token),
        )
        event_id = cursor.lastrowid
        assert event_id is not None
        return event_id

    def update_event(
        self, event_id: int, *, text: str | None = None, metadata: Metadata | None = None
    ) -> None:
        """Replace an event's text and/or its whole metadata (e.g. a tool going from
        running to completed). This process becomes the event's writer."""
        body = None if metadata is None else _enc_doc(metadata, "event metadata")
        me = liveness.current_stamp()
        with self._transaction("updating a transcript event", write=True) as conn:
            row = conn.execute("SELECT session_id FROM events WHERE id = ?", (event_id,)).fetchone()
            if row is None:
                raise EventNotFoundError(event_id)
            conn.execute(
                "UPDATE events SET text = coalesce(?, text), metadata = coalesce(?, metadata),"
                " writer_pid = ?, writer_token = ? WHERE id = ?",
                (None if text is None else _enc(text), body, me.pid, me.token, event_id),
            )
            self._touch(conn, row[0])

    def mark_interrupted_tools(self, session_id: str) -> int:
        """Mark tool events still "running" whose writing process has died as "interrupted";
        returns how many. Tools running in a live process (this one or another) are left as
        they are. :meth:`load` calls this; it writes only when there is something to mark."""
        with self._transaction("checking for interrupted tools", write=False) as conn:
            candidates = self._stale_tool_events(conn, session_id)
        if not candidates:
            return 0
        with self._transaction("marking interrupted tools", write=True) as conn:
            stale = self._stale_tool_events(conn, session_id)  # re-read under the write lock
            for event_id, metadata in stale:
                metadata[STATUS_KEY] = TOOL_INTERRUPTED
                conn.execute(
                    "UPDATE events SET metadata = ? WHERE id = ?",
                    (_enc_doc(metadata, "event metadata"), event_id),
                )
            if stale:
                self._touch(conn, session_id)
            return len(stale)

    @staticmethod
    def _stale_tool_events(conn: sqlite3.Connection, session_id: str) -> list[tuple[int, Metadata]]:
        stale: list[tuple[int, Metadata]] = []
        rows = conn.execute(
            "SELECT id, metadata, writer_pid, writer_token FROM events"
            " WHERE session_id = ? AND role = 'tool' ORDER BY seq",
            (session_id,),
        )
        for event_id, body, pid, token in rows:
            metadata = _dec_doc(body)
            if metadata.get(STATUS_KEY) == TOOL_RUNNING and not liveness.is_alive(pid, token):
                stale.append((event_id, metadata))
        return stale

    # -- model messages ----------------------------------------------------------------

    def replace_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """Save ``messages`` as the session's whole model history (after each turn)."""
        bodies = [_enc_doc(m, "a message") for m in messages]
        with self._transaction("saving the conversation", write=True) as conn:
            self._touch(conn, session_id)
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.executemany(
                "INSERT INTO messages VALUES (?, ?, ?)",
                [(session_id, position, body) for position, body in enumerate(bodies)],
            )

    def append_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """Add ``messages`` after the saved history (cheaper than replacing all of it)."""
        bodies = [_enc_doc(m, "a message") for m in messages]
        with self._transaction("saving the conversation", write=True) as conn:
            self._touch(conn, session_id)
            (start,) = conn.execute(
                "SELECT coalesce(max(position) + 1, 0) FROM messages WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            conn.executemany(
                "INSERT INTO messages VALUES (?, ?, ?)",
                [(session_id, start + i, body) for i, body in enumerate(bodies)],
            )

    # -- finding sessions by id, and what they hold (issue 11 item 8) -------------------

    def find_sessions(
        self, prefix: str, workspace: str | os.PathLike[str], profile: str
    ) -> list[SessionInfo]:
        """Sessions of this scope whose id is ``prefix`` or starts with it, newest first;
        an exact match alone when there is one (like git's abbreviated ids)."""
        if not prefix:
            return []
        with self._transaction("finding a session", write=False) as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE workspace = ? AND profile = ?"
                " AND substr(id, 1, ?) = ? ORDER BY updated_at DESC, id DESC",
                (_enc(canonical_workspace(workspace)), _enc(profile), len(prefix), prefix),
            ).fetchall()
        found = [self._info(row) for row in rows]
        exact = [info for info in found if info.id == prefix]
        return exact or found

    def message_counts(self, workspace: str | os.PathLike[str], profile: str) -> dict[str, int]:
        """Per session of this scope: the messages shown in its transcript (what the user
        typed, the assistant's replies and relayed requests; not tools or notices)."""
        with self._transaction("counting messages", write=False) as conn:
            rows = conn.execute(
                "SELECT s.id, (SELECT count(*) FROM events e WHERE e.session_id = s.id"
                " AND e.role IN ('user', 'assistant', 'relay'))"
                " FROM sessions s WHERE workspace = ? AND profile = ?",
                (_enc(canonical_workspace(workspace)), _enc(profile)),
            ).fetchall()
        return {session_id: count for session_id, count in rows}

    def discard_if_unused(self, session_id: str) -> bool:
        """Delete the session when no one ever wrote to it: no user message, no model
        message, no relayed task (a ``--prompt`` run that ended before its prompt was
        recorded). True when it was deleted."""
        with self._transaction("discarding an unused session", write=True) as conn:
            cursor = conn.execute(
                "DELETE FROM sessions WHERE id = ?"
                " AND NOT EXISTS (SELECT 1 FROM user_ledger WHERE session_id = ?)"
                " AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?)"
                " AND NOT EXISTS (SELECT 1 FROM events WHERE session_id = ?"
                " AND role IN ('user', 'relay'))",
                (session_id, session_id, session_id, session_id),
            )
            return cursor.rowcount == 1

    def has_content(self, session_id: str) -> bool:
        """Whether the session holds anything: messages, ledger entries or events."""
        with self._transaction("reading a session", write=False) as conn:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM events WHERE session_id = ?)"
                " OR EXISTS (SELECT 1 FROM messages WHERE session_id = ?)"
                " OR EXISTS (SELECT 1 FROM user_ledger WHERE session_id = ?)",
                (session_id, session_id, session_id),
            ).fetchone()
        return bool(row[0])

    def last_event_text(self, session_id: str, role: EventRole) -> str | None:
        """The text of the session's last transcript event of ``role`` (e.g. the last reply)."""
        with self._transaction("reading a session", write=False) as conn:
            row = conn.execute(
                "SELECT text FROM events WHERE session_id = ? AND role = ?"
                " ORDER BY seq DESC LIMIT 1",
                (session_id, role),
            ).fetchone()
            return None if row is None else _dec(row[0])
