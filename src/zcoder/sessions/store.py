"""The session store: one SQLite file, ``<home>/sessions.db``, shared by every zcoder process.

Threads: a store object owns one connection, opened with ``check_same_thread=False`` and
guarded by a lock, so any thread may call any method; calls are serialised. Processes: each
opens its own store; SQLite's WAL journal and a busy timeout let them write at once, and every
write is one short ``BEGIN IMMEDIATE`` transaction, so none is lost.

This class is the store's public face and owns its one transaction helper: each method says
what it is doing (the words every error message carries) and what is one atomic change. The
SQL itself lives by job: opening and error wording in zcoder.sessions.opening, the sessions
table in zcoder.sessions.session_table, what a session holds in zcoder.sessions.contents,
column encoding in zcoder.sessions.codec.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from zcoder.base.safefile import ensure_private_dir
from zcoder.sessions import branching, contents, liveness, session_table
from zcoder.sessions.codec import MalformedRow, enc_doc
from zcoder.sessions.errors import EventNotFoundError, SessionNotFoundError, SessionStoreError
from zcoder.sessions.opening import StoreFile, begun
from zcoder.sessions.paths import (
    STORE_FILE_NAME,
    canonical_workspace,
    create_private_file,
    looseness_warning,
)
from zcoder.sessions.records import EventRole, Message, Metadata, SessionData, SessionInfo
from zcoder.sessions.titles import fork_title

DEFAULT_BUSY_TIMEOUT_MS = 5000


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
        self._file = StoreFile(self.path, busy_timeout_ms)
        self._conn = self._file.connect()

    # -- plumbing ----------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise SessionStoreError(self.path, f"The session store {self.path} is closed.")
        return self._conn

    @contextmanager
    def _transaction(self, doing: str, *, write: bool) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            try:
                with begun(conn, write=write):
                    yield conn
            except sqlite3.Error as exc:
                raise self._file.translate(exc, doing) from exc
            except MalformedRow as exc:
                malformed = sqlite3.DatabaseError(f"malformed row: {exc}")
                raise self._file.translate(malformed, doing) from exc

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
            return session_table.insert_session(
                conn, self._clock, canonical_workspace(workspace), profile, model, one_shot=one_shot
            )

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
            reused = session_table.take_empty_session(
                conn, self._clock, ws, profile, model, take=take, one_shot=one_shot
            )
            if reused is not None:
                return reused
            created = session_table.insert_session(
                conn, self._clock, ws, profile, model, one_shot=one_shot
            )
            if take is not None and not take(created.id):
                raise sqlite3.OperationalError(f"could not take the new session {created.id}")
            return created

    def list_sessions(self, workspace: str | os.PathLike[str], profile: str) -> list[SessionInfo]:
        """Sessions of this workspace and profile, newest (last updated) first; one-shot
        ones too (``SessionInfo.one_shot`` says which)."""
        with self._transaction("listing sessions", write=False) as conn:
            return session_table.list_sessions(conn, canonical_workspace(workspace), profile)

    def load(self, session_id: str, workspace: str | os.PathLike[str], profile: str) -> SessionData:
        """Everything saved for a session of this workspace and profile.

        Raises :class:`SessionNotFoundError` for an unknown id and for a session of another
        workspace or profile alike. Tool events left running by a process that has died are
        marked interrupted first (see :meth:`mark_interrupted_tools`).
        """
        ws = canonical_workspace(workspace)
        with self._transaction("loading a session", write=False) as conn:
            if not session_table.in_scope(conn, session_id, ws, profile):
                raise SessionNotFoundError(session_id, ws)
        self.mark_interrupted_tools(session_id)
        with self._transaction("loading a session", write=False) as conn:
            info = session_table.scoped_info(conn, session_id, ws, profile)
            if info is None:
                raise SessionNotFoundError(session_id, ws)
            messages = contents.read_messages(conn, session_id)
            ledger = contents.read_ledger(conn, session_id)
            events = contents.read_events(conn, session_id)
            pending = contents.read_pending(conn, session_id)
            state = contents.read_state(conn, session_id)
        return SessionData(info, messages, ledger, events, pending, state)

    def set_model(self, session_id: str, model: str) -> None:
        with self._transaction("saving the model", write=True) as conn:
            session_table.set_model(conn, self._clock, session_id, model)

    def keep(self, session_id: str) -> None:
        """Keep the session though it may stay empty: its id was handed to a client that
        may load it later (ACP's session/new). It is then neither discarded as unused nor
        reused for another start."""
        with self._transaction("keeping a session", write=True) as conn:
            session_table.keep(conn, session_id)

    def set_title_if_default(self, session_id: str, text: str) -> bool:
        """Title the session from ``text`` unless it already has a title; True if changed.

        Only for what the user typed: relayed and program-made text never titles a session.
        :meth:`record_user_message` calls this for you.
        """
        with self._transaction("saving the title", write=True) as conn:
            return session_table.set_title_if_default(conn, self._clock, session_id, text)

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
            session_table.set_title_if_default(conn, self._clock, session_id, text)
            contents.append_ledger(conn, session_id, text)
            return contents.insert_event(
                conn, self._clock, session_id, "user", text, metadata=metadata or {}
            )

    # -- transcript --------------------------------------------------------------------

    def append_event(
        self, session_id: str, role: EventRole, text: str, metadata: Metadata | None = None
    ) -> int:
        """Add a transcript event at the end of the session; returns its id."""
        with self._transaction("saving a transcript event", write=True) as conn:
            return contents.insert_event(
                conn, self._clock, session_id, role, text, metadata=metadata or {}
            )

    def update_event(
        self, event_id: int, *, text: str | None = None, metadata: Metadata | None = None
    ) -> None:
        """Replace an event's text and/or its whole metadata (e.g. a tool going from
        running to completed). This process becomes the event's writer."""
        body = None if metadata is None else enc_doc(metadata, "event metadata")
        me = liveness.current_stamp()
        with self._transaction("updating a transcript event", write=True) as conn:
            session_id = contents.event_session(conn, event_id)
            if session_id is None:
                raise EventNotFoundError(event_id)
            contents.update_event(conn, event_id, text, body, me)
            session_table.touch(conn, self._clock, session_id)

    def mark_interrupted_tools(self, session_id: str) -> int:
        """Mark tool events still "running" whose writing process has died as "interrupted";
        returns how many. Tools running in a live process (this one or another) are left as
        they are. :meth:`load` calls this; it writes only when there is something to mark."""
        with self._transaction("checking for interrupted tools", write=False) as conn:
            candidates = contents.stale_tool_events(conn, session_id)
        if not candidates:
            return 0
        with self._transaction("marking interrupted tools", write=True) as conn:
            stale = contents.stale_tool_events(conn, session_id)  # re-read under the write lock
            contents.mark_interrupted(conn, stale)
            if stale:
                session_table.touch(conn, self._clock, session_id)
            return len(stale)

    # -- model messages ----------------------------------------------------------------

    def replace_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """Save ``messages`` as the session's whole model history (after each turn)."""
        bodies = contents.encode_messages(messages)
        with self._transaction("saving the conversation", write=True) as conn:
            session_table.touch(conn, self._clock, session_id)
            contents.replace_messages(conn, session_id, bodies)

    def replace_pending(self, session_id: str, items: Sequence[tuple[str, str]]) -> None:
        """What of the user's input waits now, (kind, text) in order: it replaces what was
        saved (zcoder.frontend.pending keeps it current)."""
        saved = list(items)
        with self._transaction("saving the waiting input", write=True) as conn:
            contents.replace_pending(conn, session_id, saved)

    def save_state(self, session_id: str, key: str, value: dict[str, Any] | None) -> None:
        """Keep ``value`` as the session's ``key`` (its plan, its goal), replacing what was
        saved under it; None forgets it. Loaded with the session (``SessionData.state``)."""
        with self._transaction(f"saving the session's {key}", write=True) as conn:
            contents.write_state(conn, session_id, key, value)

    def append_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """Add ``messages`` after the saved history (cheaper than replacing all of it)."""
        bodies = contents.encode_messages(messages)
        with self._transaction("saving the conversation", write=True) as conn:
            session_table.touch(conn, self._clock, session_id)
            contents.append_messages(conn, session_id, bodies)

    # -- going back, branching off (/rewind, /fork) ---------------------------------------

    def cut(self, session_id: str, messages: Sequence[Message], *, ledger: int) -> None:
        """Go back in the session to before the user's prompt number ``ledger`` (from 0):
        ``messages`` become its model history, its ledger keeps the prompts before it and
        its transcript the events before it. One transaction: a --resume sees all of it or
        none of it."""
        bodies = contents.encode_messages(messages)
        with self._transaction("rewinding the conversation", write=True) as conn:
            branching.cut(conn, self._clock, session_id, ledger=ledger)
            contents.replace_messages(conn, session_id, bodies)

    def fork(
        self,
        session_id: str,
        workspace: str | os.PathLike[str],
        profile: str,
        *,
        title: str = "",
    ) -> SessionInfo:
        """A new session with a copy of ``session_id``'s history, ledger, transcript and
        state, titled ``title`` (default: "fork of" the source's title); the source is left
        as it is. SessionNotFoundError when this scope has no such session."""
        ws = canonical_workspace(workspace)
        with self._transaction("forking a session", write=True) as conn:
            source = session_table.scoped_info(conn, session_id, ws, profile)
            if source is None:
                raise SessionNotFoundError(session_id, ws)
            return branching.fork(
                conn, self._clock, source, fork_title(title, source.title), source.model
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
            found = session_table.find_sessions(
                conn, prefix, canonical_workspace(workspace), profile
            )
        exact = [info for info in found if info.id == prefix]
        return exact or found

    def message_counts(self, workspace: str | os.PathLike[str], profile: str) -> dict[str, int]:
        """Per session of this scope: the messages shown in its transcript (what the user
        typed, the assistant's replies and relayed requests; not tools or notices)."""
        with self._transaction("counting messages", write=False) as conn:
            return session_table.message_counts(conn, canonical_workspace(workspace), profile)

    def discard_if_unused(self, session_id: str) -> bool:
        """Delete the session when no one ever wrote to it: no user message, no model
        message, no relayed task (a ``--prompt`` run that ended before its prompt was
        recorded). True when it was deleted."""
        with self._transaction("discarding an unused session", write=True) as conn:
            return session_table.discard_if_unused(conn, session_id)

    def has_content(self, session_id: str) -> bool:
        """Whether the session holds anything: messages, ledger entries or events."""
        with self._transaction("reading a session", write=False) as conn:
            return session_table.has_content(conn, session_id)

    def last_event_text(self, session_id: str, role: EventRole) -> str | None:
        """The text of the session's last transcript event of ``role`` (e.g. the last reply)."""
        with self._transaction("reading a session", write=False) as conn:
            return contents.last_event_text(conn, session_id, role)
