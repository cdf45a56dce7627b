"""Going back in a session and branching one off: the SQL of SessionStore.cut and .fork.

Like zcoder.sessions.contents, every function here runs inside a transaction that
SessionStore opened: a cut (the ledger, the transcript and the model history shortened
together) and a fork (a new session with a copy of everything the source holds) are each
one atomic change, so a crash never leaves a session half cut or a fork half copied.
"""

from __future__ import annotations

import sqlite3

from zcoder.sessions.codec import enc
from zcoder.sessions.records import SessionInfo
from zcoder.sessions.session_table import Clock, insert_session, touch

# What a fork copies, table by table: every column but the session's id.
_COPIED = {
    "messages": "position, body",
    "user_ledger": "position, text",
    "events": "seq, role, text, metadata, created_at, writer_pid, writer_token",
    "session_state": "key, value",
}


def cut(conn: sqlite3.Connection, clock: Clock, session_id: str, *, ledger: int) -> None:
    """Keep the first ``ledger`` entries of the user's ledger, and the transcript's events
    before the user's prompt number ``ledger`` (each prompt is one "user" event)."""
    touch(conn, clock, session_id)
    conn.execute(
        "DELETE FROM user_ledger WHERE session_id = ? AND position >= ?", (session_id, ledger)
    )
    row = conn.execute(
        "SELECT seq FROM events WHERE session_id = ? AND role = 'user'"
        " ORDER BY seq LIMIT 1 OFFSET ?",
        (session_id, ledger),
    ).fetchone()
    if row is not None:
        conn.execute("DELETE FROM events WHERE session_id = ? AND seq >= ?", (session_id, row[0]))


def fork(
    conn: sqlite3.Connection, clock: Clock, source: SessionInfo, title: str, model: str
) -> SessionInfo:
    """A new session of ``source``'s scope titled ``title``, holding a copy of its history,
    ledger, transcript and state (not the input waiting for it: that stays the source's)."""
    made = insert_session(conn, clock, source.workspace, source.profile, model, one_shot=False)
    conn.execute(
        "UPDATE sessions SET title = ?, title_is_default = 0 WHERE id = ?", (enc(title), made.id)
    )
    for table, columns in _COPIED.items():
        conn.execute(
            f"INSERT INTO {table} (session_id, {columns})"
            f" SELECT ?, {columns} FROM {table} WHERE session_id = ?",
            (made.id, source.id),
        )
    return SessionInfo(
        made.id, made.workspace, made.profile, model, title, made.created_at, made.updated_at
    )
