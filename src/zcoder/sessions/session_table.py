"""The ``sessions`` table: creating, taking, titling and finding sessions of a scope.

A scope is a canonical workspace and a profile. These functions run inside a transaction the
caller (SessionStore, which owns the one transaction helper and its error messages) opened,
so each is one step of a larger atomic change and none commits or translates errors itself.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from zcoder.sessions import liveness
from zcoder.sessions.codec import dec, enc
from zcoder.sessions.errors import SessionNotFoundError
from zcoder.sessions.records import SessionInfo
from zcoder.sessions.titles import DEFAULT_TITLE, title_from_user_message

Clock = Callable[[], float]

SESSION_ID_DIGITS = 5  # the random part of "1788012120_10392"
MAX_ID_ATTEMPTS = 32  # new ids tried before giving up; a clash is already one in 90,000

# A title still the default reads as DEFAULT_TITLE whatever is stored: sessions made before
# it was "" hold the old placeholder "New Job".
_TITLE = f"CASE title_is_default WHEN 1 THEN '{enc(DEFAULT_TITLE)}' ELSE title END"
SESSION_COLUMNS = f"id, workspace, profile, model, {_TITLE}, created_at, updated_at, one_shot"


def new_session_id(now: float) -> str:
    low = 10 ** (SESSION_ID_DIGITS - 1)
    return f"{int(now)}_{low + secrets.randbelow(9 * low)}"


def info(row: Sequence[Any]) -> SessionInfo:
    return SessionInfo(
        id=row[0],
        workspace=dec(row[1]),
        profile=dec(row[2]),
        model=dec(row[3]),
        title=dec(row[4]),
        created_at=row[5],
        updated_at=row[6],
        one_shot=bool(row[7]),
    )


def touch(conn: sqlite3.Connection, clock: Clock, session_id: str) -> float:
    """Bump the session's updated time; raise if it does not exist."""
    now = clock()
    cursor = conn.execute(
        "UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?", (now, session_id)
    )
    if cursor.rowcount == 0:
        raise SessionNotFoundError(session_id)
    return now


def insert_session(
    conn: sqlite3.Connection,
    clock: Clock,
    workspace: str,
    profile: str,
    model: str,
    *,
    one_shot: bool,
) -> SessionInfo:
    now = clock()
    me = liveness.current_stamp()
    for _ in range(MAX_ID_ATTEMPTS):
        session_id = new_session_id(now)
        cursor = conn.execute(
            "INSERT OR IGNORE INTO sessions (id, workspace, profile, model, title,"
            " title_is_default, created_at, updated_at, holder_pid, holder_token, one_shot)"
            " VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)",
            (
                session_id,
                enc(workspace),
                enc(profile),
                enc(model),
                enc(DEFAULT_TITLE),
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


def take_empty_session(
    conn: sqlite3.Connection,
    clock: Clock,
    workspace: str,
    profile: str,
    model: str,
    *,
    take: Callable[[str], bool] | None,
    one_shot: bool,
) -> SessionInfo | None:
    """The newest empty session of the scope that may be taken, now held by this process
    with ``model`` and ``one_shot``; None when there is none (see SessionStore.reuse_or_create)."""
    rows = conn.execute(
        f"SELECT {SESSION_COLUMNS}, holder_pid, holder_token FROM sessions s"
        " WHERE workspace = ? AND profile = ? AND kept = 0"
        " AND NOT EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.id)"
        " AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)"
        " AND NOT EXISTS (SELECT 1 FROM user_ledger u WHERE u.session_id = s.id)"
        " ORDER BY updated_at DESC, id DESC",
        (enc(workspace), enc(profile)),
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
        now = clock()
        conn.execute(
            "UPDATE sessions SET model = ?, updated_at = max(updated_at, ?),"
            " holder_pid = ?, holder_token = ?, one_shot = ? WHERE id = ?",
            (enc(model), now, me.pid, me.token, int(one_shot), row[0]),
        )
        reused = conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (row[0],)
        ).fetchone()
        return info(reused)
    return None


def scoped_info(
    conn: sqlite3.Connection, session_id: str, workspace: str, profile: str
) -> SessionInfo | None:
    """The session with this id, if it belongs to this scope."""
    row = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ? AND workspace = ? AND profile = ?",
        (session_id, enc(workspace), enc(profile)),
    ).fetchone()
    return None if row is None else info(row)


def in_scope(conn: sqlite3.Connection, session_id: str, workspace: str, profile: str) -> bool:
    scoped = "SELECT 1 FROM sessions WHERE id = ? AND workspace = ? AND profile = ?"
    return conn.execute(scoped, (session_id, enc(workspace), enc(profile))).fetchone() is not None


def list_sessions(conn: sqlite3.Connection, workspace: str, profile: str) -> list[SessionInfo]:
    rows = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE workspace = ? AND profile = ?"
        " ORDER BY updated_at DESC, id DESC",
        (enc(workspace), enc(profile)),
    ).fetchall()
    return [info(row) for row in rows]


def find_sessions(
    conn: sqlite3.Connection, prefix: str, workspace: str, profile: str
) -> list[SessionInfo]:
    rows = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE workspace = ? AND profile = ?"
        " AND substr(id, 1, ?) = ? ORDER BY updated_at DESC, id DESC",
        (enc(workspace), enc(profile), len(prefix), prefix),
    ).fetchall()
    return [info(row) for row in rows]


def message_counts(conn: sqlite3.Connection, workspace: str, profile: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT s.id, (SELECT count(*) FROM events e WHERE e.session_id = s.id"
        " AND e.role IN ('user', 'assistant', 'relay'))"
        " FROM sessions s WHERE workspace = ? AND profile = ?",
        (enc(workspace), enc(profile)),
    ).fetchall()
    return {session_id: count for session_id, count in rows}


def set_model(conn: sqlite3.Connection, clock: Clock, session_id: str, model: str) -> None:
    touch(conn, clock, session_id)
    conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (enc(model), session_id))


def keep(conn: sqlite3.Connection, session_id: str) -> None:
    conn.execute("UPDATE sessions SET kept = 1 WHERE id = ?", (session_id,))


def set_title_if_default(
    conn: sqlite3.Connection, clock: Clock, session_id: str, text: str
) -> bool:
    title = title_from_user_message(text)
    if not title:
        touch(conn, clock, session_id)
        return False
    cursor = conn.execute(
        "UPDATE sessions SET title = ?, title_is_default = 0 WHERE id = ? AND title_is_default = 1",
        (enc(title), session_id),
    )
    touch(conn, clock, session_id)
    return cursor.rowcount == 1


def discard_if_unused(conn: sqlite3.Connection, session_id: str) -> bool:
    cursor = conn.execute(
        "DELETE FROM sessions WHERE id = ? AND kept = 0"
        " AND NOT EXISTS (SELECT 1 FROM user_ledger WHERE session_id = ?)"
        " AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?)"
        " AND NOT EXISTS (SELECT 1 FROM events WHERE session_id = ?"
        " AND role IN ('user', 'relay'))",
        (session_id, session_id, session_id, session_id),
    )
    return cursor.rowcount == 1


def has_content(conn: sqlite3.Connection, session_id: str) -> bool:
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM events WHERE session_id = ?)"
        " OR EXISTS (SELECT 1 FROM messages WHERE session_id = ?)"
        " OR EXISTS (SELECT 1 FROM user_ledger WHERE session_id = ?)",
        (session_id, session_id, session_id),
    ).fetchone()
    return bool(row[0])
