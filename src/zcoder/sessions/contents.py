"""What a session holds: the transcript's events, the exact-user ledger and the model messages.

Like zcoder.sessions.session_table, every function here runs inside a transaction that
SessionStore opened: adding an event, a ledger entry and a title is then one atomic change.
Writing an event bumps its session's updated time through the same ``touch``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from zcoder.sessions import liveness
from zcoder.sessions.codec import dec, dec_doc, enc, enc_doc
from zcoder.sessions.records import (
    EVENT_ROLES,
    STATUS_KEY,
    TOOL_INTERRUPTED,
    TOOL_RUNNING,
    EventRole,
    Message,
    Metadata,
    TranscriptEvent,
)
from zcoder.sessions.session_table import Clock, touch


def append_ledger(conn: sqlite3.Connection, session_id: str, text: str) -> None:
    """Add what the user typed to the end of the session's exact-user ledger."""
    (position,) = conn.execute(
        "SELECT coalesce(max(position) + 1, 0) FROM user_ledger WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    conn.execute("INSERT INTO user_ledger VALUES (?, ?, ?)", (session_id, position, enc(text)))


def insert_event(
    conn: sqlite3.Connection,
    clock: Clock,
    session_id: str,
    role: EventRole,
    text: str,
    *,
    metadata: Metadata,
) -> int:
    if role not in EVENT_ROLES:
        raise ValueError(f"unknown transcript role {role!r}; expected one of {EVENT_ROLES}")
    body = enc_doc(metadata, "event metadata")
    now = touch(conn, clock, session_id)
    (seq,) = conn.execute(
        "SELECT coalesce(max(seq) + 1, 1) FROM events WHERE session_id = ?", (session_id,)
    ).fetchone()
    me = liveness.current_stamp()
    cursor = conn.execute(
        "INSERT INTO events (session_id, seq, role, text, metadata, created_at,"
        " writer_pid, writer_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, seq, role, enc(text), body, now, me.pid, me.token),
    )
    event_id = cursor.lastrowid
    assert event_id is not None
    return event_id


def event_session(conn: sqlite3.Connection, event_id: int) -> str | None:
    """The id of the session that holds the event, or None when there is no such event."""
    row = conn.execute("SELECT session_id FROM events WHERE id = ?", (event_id,)).fetchone()
    return None if row is None else str(row[0])


def update_event(
    conn: sqlite3.Connection,
    event_id: int,
    text: str | None,
    body: str | None,
    writer: liveness.ProcessStamp,
) -> None:
    """Replace the event's text and/or its encoded metadata; ``writer`` becomes its writer."""
    conn.execute(
        "UPDATE events SET text = coalesce(?, text), metadata = coalesce(?, metadata),"
        " writer_pid = ?, writer_token = ? WHERE id = ?",
        (None if text is None else enc(text), body, writer.pid, writer.token, event_id),
    )


def stale_tool_events(conn: sqlite3.Connection, session_id: str) -> list[tuple[int, Metadata]]:
    """Tool events still "running" whose writing process has died."""
    stale: list[tuple[int, Metadata]] = []
    rows = conn.execute(
        "SELECT id, metadata, writer_pid, writer_token FROM events"
        " WHERE session_id = ? AND role = 'tool' ORDER BY seq",
        (session_id,),
    )
    for event_id, body, pid, token in rows:
        metadata = dec_doc(body)
        if metadata.get(STATUS_KEY) == TOOL_RUNNING and not liveness.is_alive(pid, token):
            stale.append((event_id, metadata))
    return stale


def mark_interrupted(conn: sqlite3.Connection, stale: list[tuple[int, Metadata]]) -> None:
    for event_id, metadata in stale:
        metadata[STATUS_KEY] = TOOL_INTERRUPTED
        conn.execute(
            "UPDATE events SET metadata = ? WHERE id = ?",
            (enc_doc(metadata, "event metadata"), event_id),
        )


def read_messages(conn: sqlite3.Connection, session_id: str) -> list[Message]:
    return [
        dec_doc(body)
        for (body,) in conn.execute(
            "SELECT body FROM messages WHERE session_id = ? ORDER BY position", (session_id,)
        )
    ]


def read_ledger(conn: sqlite3.Connection, session_id: str) -> list[str]:
    return [
        dec(text)
        for (text,) in conn.execute(
            "SELECT text FROM user_ledger WHERE session_id = ? ORDER BY position", (session_id,)
        )
    ]


def read_events(conn: sqlite3.Connection, session_id: str) -> list[TranscriptEvent]:
    return [
        TranscriptEvent(
            id=event_id,
            session_id=session_id,
            seq=seq,
            role=role,
            text=dec(text),
            metadata=dec_doc(metadata),
            created_at=created_at,
        )
        for event_id, seq, role, text, metadata, created_at in conn.execute(
            "SELECT id, seq, role, text, metadata, created_at FROM events"
            " WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
    ]


def last_event_text(conn: sqlite3.Connection, session_id: str, role: EventRole) -> str | None:
    row = conn.execute(
        "SELECT text FROM events WHERE session_id = ? AND role = ? ORDER BY seq DESC LIMIT 1",
        (session_id, role),
    ).fetchone()
    return None if row is None else dec(row[0])


PENDING_KINDS: Final = ("steer", "follow-up")


def read_pending(conn: sqlite3.Connection, session_id: str) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT kind, text FROM pending_input WHERE session_id = ? ORDER BY position",
        (session_id,),
    )
    return [(kind, dec(text)) for kind, text in rows]


def replace_pending(
    conn: sqlite3.Connection, session_id: str, items: Sequence[tuple[str, str]]
) -> None:
    for kind, _text in items:
        if kind not in PENDING_KINDS:
            raise ValueError(f"unknown pending input kind {kind!r}; expected {PENDING_KINDS}")
    conn.execute("DELETE FROM pending_input WHERE session_id = ?", (session_id,))
    conn.executemany(
        "INSERT INTO pending_input VALUES (?, ?, ?, ?)",
        [(session_id, n, kind, enc(text)) for n, (kind, text) in enumerate(items)],
    )


def read_state(conn: sqlite3.Connection, session_id: str) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        "SELECT key, value FROM session_state WHERE session_id = ? ORDER BY key", (session_id,)
    )
    return {key: dec_doc(value) for key, value in rows}


def write_state(
    conn: sqlite3.Connection, session_id: str, key: str, value: dict[str, Any] | None
) -> None:
    if value is None:
        conn.execute(
            "DELETE FROM session_state WHERE session_id = ? AND key = ?", (session_id, key)
        )
        return
    conn.execute(
        "INSERT OR REPLACE INTO session_state VALUES (?, ?, ?)",
        (session_id, key, enc_doc(value, f"the session's {key}")),
    )


def encode_messages(messages: Sequence[Message]) -> list[str]:
    return [enc_doc(m, "a message") for m in messages]


def replace_messages(conn: sqlite3.Connection, session_id: str, bodies: list[str]) -> None:
    conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
    conn.executemany(
        "INSERT INTO messages VALUES (?, ?, ?)",
        [(session_id, position, body) for position, body in enumerate(bodies)],
    )


def append_messages(conn: sqlite3.Connection, session_id: str, bodies: list[str]) -> None:
    (start,) = conn.execute(
        "SELECT coalesce(max(position) + 1, 0) FROM messages WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    conn.executemany(
        "INSERT INTO messages VALUES (?, ?, ?)",
        [(session_id, start + i, body) for i, body in enumerate(bodies)],
    )
