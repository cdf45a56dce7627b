"""A store written by an older zcoder is brought up to date with its rows intact."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.sessions.conftest import old_store
from zcoder.sessions import SessionStore
from zcoder.sessions.schema import SCHEMA_VERSION, read_version


def _version_1_store(home: Path) -> None:
    with old_store(home, 1) as conn:
        conn.execute(
            "INSERT INTO sessions VALUES ('s1', '\"/w\"', '\"coding\"', '\"m\"', '\"t\"', 1,"
            " 1.0, 1.0, 1, 'tok')"
        )
        for seq, role in enumerate(("user", "assistant", "relay"), 1):
            conn.execute(
                "INSERT INTO events (session_id, seq, role, text, metadata, created_at,"
                " writer_pid, writer_token) VALUES ('s1', ?, ?, ?, '{}', 1.0, 1, 'tok')",
                (seq, role, f'"{role} text"'),
            )


def test_a_version_1_store_gets_receipt_events_and_keeps_its_rows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _version_1_store(home)
    store = SessionStore(home)
    try:
        data = store.load("s1", "/w", "coding")
        assert [(e.role, e.text) for e in data.events] == [
            ("user", "user text"),
            ("assistant", "assistant text"),
            ("relay", "relay text"),
        ]
        store.append_event("s1", "receipt", "api: completed — done", {"outcome": "completed"})
        again = store.load("s1", "/w", "coding")
        assert [e.role for e in again.events][-1] == "receipt"
        assert [e.seq for e in again.events] == [1, 2, 3, 4]
    finally:
        store.close()
    conn = sqlite3.connect(home / "sessions.db")
    assert read_version(conn) == SCHEMA_VERSION >= 2
    ids = [row[0] for row in conn.execute("SELECT id FROM events ORDER BY id")]
    assert ids == [1, 2, 3, 4]  # ids kept, and the sequence went on after them
    conn.close()
