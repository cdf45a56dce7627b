"""The versioned schema: ``PRAGMA user_version`` counts the migrations applied.

``MIGRATIONS[n]`` takes a store from version n to n + 1. To change the schema, append a
function; never edit one that has shipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

Migration = Callable[[sqlite3.Connection], None]

# Every user-derived string (workspace, profile, model, title, event text, ledger entries)
# is stored as a JSON string literal, and messages and metadata as JSON documents: any
# Python str, including NUL and lone surrogates from undecodable file names, comes back
# exactly as it went in.
_V1 = """
CREATE TABLE sessions (
    id               TEXT PRIMARY KEY,
    workspace        TEXT NOT NULL,
    profile          TEXT NOT NULL,
    model            TEXT NOT NULL,
    title            TEXT NOT NULL,
    title_is_default INTEGER NOT NULL CHECK (title_is_default IN (0, 1)),
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL,
    holder_pid       INTEGER NOT NULL,
    holder_token     TEXT NOT NULL
);
CREATE INDEX sessions_by_scope ON sessions (workspace, profile, updated_at DESC, id DESC);

CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
);

CREATE TABLE user_ledger (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    text       TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
);

CREATE TABLE events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    role         TEXT NOT NULL
                 CHECK (role IN ('user', 'assistant', 'tool', 'system', 'error', 'relay')),
    text         TEXT NOT NULL,
    metadata     TEXT NOT NULL,
    created_at   REAL NOT NULL,
    writer_pid   INTEGER NOT NULL,
    writer_token TEXT NOT NULL,
    UNIQUE (session_id, seq)
);
"""


def _create_v1(conn: sqlite3.Connection) -> None:
    for statement in _V1.split(";"):
        if statement.strip():
            conn.execute(statement)


def _events_v2(conn: sqlite3.Connection) -> None:
    """Version 2: events may also be receipts (zcoder.relay.receipts). SQLite cannot change
    a CHECK in place, so the table is rebuilt with the same rows and ids."""
    conn.execute(
        """
        CREATE TABLE events_v2 (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            seq          INTEGER NOT NULL,
            role         TEXT NOT NULL
                         CHECK (role IN ('user', 'assistant', 'tool', 'system', 'error',
                                         'relay', 'receipt')),
            text         TEXT NOT NULL,
            metadata     TEXT NOT NULL,
            created_at   REAL NOT NULL,
            writer_pid   INTEGER NOT NULL,
            writer_token TEXT NOT NULL,
            UNIQUE (session_id, seq)
        )
        """
    )
    conn.execute("INSERT INTO events_v2 SELECT * FROM events")
    conn.execute("DROP TABLE events")
    conn.execute("ALTER TABLE events_v2 RENAME TO events")


def _relay_log_v3(conn: sqlite3.Connection) -> None:
    """Version 3: the history of relayed messages sent and received (/inbox)."""
    conn.execute(
        """
        CREATE TABLE relay_log (
            id               INTEGER PRIMARY KEY AUTOINCREMENT,
            workspace        TEXT NOT NULL,
            session_id       TEXT NOT NULL,
            direction        TEXT NOT NULL CHECK (direction IN ('sent', 'received')),
            message_id       TEXT NOT NULL,
            peer_instance_id TEXT NOT NULL,
            peer_name        TEXT NOT NULL,
            body             TEXT NOT NULL,
            state            TEXT NOT NULL,
            receipt          TEXT NOT NULL,
            created_at       REAL NOT NULL,
            updated_at       REAL NOT NULL,
            UNIQUE (direction, message_id)
        )
        """
    )
    conn.execute("CREATE INDEX relay_log_by_workspace ON relay_log (workspace, created_at DESC)")


def _one_shot_v4(conn: sqlite3.Connection) -> None:
    """Version 4: a session of ``zcoder --prompt`` is marked one-shot, so that the
    interactive list can leave it out. Nothing recorded before which run made a session:
    the sessions already stored count as interactive."""
    conn.execute(
        "ALTER TABLE sessions ADD COLUMN one_shot INTEGER NOT NULL DEFAULT 0"
        " CHECK (one_shot IN (0, 1))"
    )


def _kept_v5(conn: sqlite3.Connection) -> None:
    """Version 5: a session whose id was handed to a client (an editor's session/new) is
    kept while empty: never discarded as unused, never reused for another start."""
    conn.execute(
        "ALTER TABLE sessions ADD COLUMN kept INTEGER NOT NULL DEFAULT 0 CHECK (kept IN (0, 1))"
    )


def _pending_v6(conn: sqlite3.Connection) -> None:
    """Version 6: the user's input still waiting for the agent when the session was last
    saved (steering for a running turn, follow-ups after it), in order; a crash or a kill
    leaves it here, and the next open shows it without running it."""
    conn.execute(
        """
        CREATE TABLE pending_input (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            position   INTEGER NOT NULL,
            kind       TEXT NOT NULL CHECK (kind IN ('steer', 'follow-up')),
            text       TEXT NOT NULL,
            PRIMARY KEY (session_id, position)
        )
        """
    )


def _state_v7(conn: sqlite3.Connection) -> None:
    """Version 7: what a session keeps besides its history, one JSON document per key
    (the model's plan, a goal, ...), each written whole when it changes."""
    conn.execute(
        """
        CREATE TABLE session_state (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            key        TEXT NOT NULL,
            value      TEXT NOT NULL,
            PRIMARY KEY (session_id, key)
        )
        """
    )


MIGRATIONS: tuple[Migration, ...] = (
    _create_v1,
    _events_v2,
    _relay_log_v3,
    _one_shot_v4,
    _kept_v5,
    _pending_v6,
    _state_v7,
)
SCHEMA_VERSION = len(MIGRATIONS)


def read_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the store up to ``len(migrations)`` inside the caller's write transaction.

    Returns the version found. A version newer than ``len(migrations)`` is left alone; the
    caller reports it.
    """
    found = read_version(conn)
    for version in range(found, len(migrations)):
        migrations[version](conn)
        conn.execute(f"PRAGMA user_version = {version + 1:d}")
    return found
