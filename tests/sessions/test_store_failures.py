"""A damaged, foreign, newer or locked store gives a clear error and is never modified."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sessions.workers import LOCK_HOLDER
from zcoder.sessions import (
    SCHEMA_VERSION,
    STORE_FILE_NAME,
    SessionStore,
    StoreCorruptError,
    StoreLockedError,
    StoreVersionError,
)
from zcoder.sessions.schema import migrate, read_version

SHORT_TIMEOUT_MS = 200


def test_garbage_file_is_a_clear_error_and_left_byte_for_byte(home: Path) -> None:
    home.mkdir(mode=0o700)
    db = home / STORE_FILE_NAME
    garbage = bytes(range(256)) * 64 + b"definitely not SQLite\n" * 10
    db.write_bytes(garbage)
    with pytest.raises(StoreCorruptError) as caught:
        SessionStore(home)
    message = str(caught.value)
    assert str(db) in message
    assert "Move it aside" in message
    assert caught.value.path == db
    assert db.read_bytes() == garbage
    assert sorted(p.name for p in home.iterdir()) == [STORE_FILE_NAME]


def test_sqlite_file_of_another_program_is_refused_unchanged(home: Path) -> None:
    home.mkdir(mode=0o700)
    db = home / STORE_FILE_NAME
    with sqlite3.connect(db) as other:
        other.execute("CREATE TABLE recipes (name TEXT)")
    other.close()
    before = db.read_bytes()
    with pytest.raises(StoreCorruptError, match="not a zcoder session store"):
        SessionStore(home)
    assert db.read_bytes() == before


def test_store_from_a_newer_zcoder_is_refused_unchanged(home: Path, workspace: Path) -> None:
    with SessionStore(home) as store:
        store.create_session(workspace, "coding", "m")
    db = home / STORE_FILE_NAME
    raw = sqlite3.connect(db)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    before = db.read_bytes()
    with pytest.raises(StoreVersionError) as caught:
        SessionStore(home)
    assert str(db) in str(caught.value)
    assert "newer zcoder" in str(caught.value)
    assert db.read_bytes() == before


def test_damaged_row_is_reported_as_a_damaged_store(home: Path, workspace: Path) -> None:
    with SessionStore(home) as store:
        info = store.create_session(workspace, "coding", "m")
        store.append_event(info.id, "assistant", "fine")
    raw = sqlite3.connect(home / STORE_FILE_NAME)
    raw.execute("UPDATE events SET text = 'not json'")
    raw.commit()
    raw.close()
    with SessionStore(home) as store, pytest.raises(StoreCorruptError, match="damaged"):
        store.load(info.id, workspace, "coding")


@pytest.fixture
def lock_holder(home: Path, request: pytest.FixtureRequest) -> Iterator[None]:
    """Another process holding the store's lock until the test ends."""
    SessionStore(home).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(home / STORE_FILE_NAME), request.param],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)


@pytest.mark.parametrize("lock_holder", ["exclusive"], indirect=True)
def test_store_locked_exclusively_elsewhere_fails_to_open_clearly(
    home: Path, lock_holder: None
) -> None:
    started = time.monotonic()
    with pytest.raises(StoreLockedError) as caught:
        SessionStore(home, busy_timeout_ms=SHORT_TIMEOUT_MS)
    assert time.monotonic() - started >= SHORT_TIMEOUT_MS / 1000 * 0.8
    assert str(home / STORE_FILE_NAME) in str(caught.value)
    assert "locked by another program" in str(caught.value)


@pytest.mark.parametrize("lock_holder", ["immediate"], indirect=True)
def test_write_blocked_past_the_busy_timeout_fails_clearly_and_reads_go_on(
    home: Path, workspace: Path, lock_holder: None
) -> None:
    with SessionStore(home, busy_timeout_ms=SHORT_TIMEOUT_MS) as store:
        assert store.list_sessions(workspace, "coding") == []  # WAL: readers are not blocked
        with pytest.raises(StoreLockedError, match="while creating a session") as caught:
            store.create_session(workspace, "coding", "m")
        assert str(home / STORE_FILE_NAME) in str(caught.value)


def test_store_works_again_once_the_lock_is_released(home: Path, workspace: Path) -> None:
    SessionStore(home).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(home / STORE_FILE_NAME), "immediate"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "locked"
    with SessionStore(home, busy_timeout_ms=5000) as store:
        holder.stdin.close()  # released while we wait: the busy timeout covers it
        info = store.create_session(workspace, "coding", "m")
        assert [s.id for s in store.list_sessions(workspace, "coding")] == [info.id]
    holder.wait(timeout=10)


def test_new_store_is_at_the_current_schema_version(home: Path) -> None:
    SessionStore(home).close()
    raw = sqlite3.connect(home / STORE_FILE_NAME)
    try:
        assert read_version(raw) == SCHEMA_VERSION
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        raw.close()


def test_migrations_run_in_order_once_each() -> None:
    ran: list[int] = []

    def step(n: int) -> object:
        def migration(conn: sqlite3.Connection) -> None:
            ran.append(n)
            conn.execute(f"CREATE TABLE t{n} (x)")

        return migration

    steps = [step(0), step(1), step(2)]
    conn = sqlite3.connect(":memory:")
    try:
        assert migrate(conn, steps[:1]) == 0  # type: ignore[arg-type]
        assert migrate(conn, steps) == 1  # type: ignore[arg-type]
        assert migrate(conn, steps) == 3  # type: ignore[arg-type]
        assert ran == [0, 1, 2]
        assert read_version(conn) == 3
    finally:
        conn.close()


def test_reopening_a_current_store_does_not_migrate_again(home: Path, workspace: Path) -> None:
    with SessionStore(home) as store:
        info = store.create_session(workspace, "coding", "m")
    with SessionStore(home) as store:
        assert [s.id for s in store.list_sessions(workspace, "coding")] == [info.id]
