from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from zcoder.sessions import STORE_FILE_NAME, SessionStore
from zcoder.sessions.schema import MIGRATIONS, migrate, read_version

# ``home`` and ``workspace`` (a zcoder home, a project) are tests/conftest.py's.


class FakeClock:
    """A clock the test moves by hand, so 'newest first' is deterministic."""

    def __init__(self, start: float = 1_788_012_120.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = 1.0) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(home: Path, clock: FakeClock) -> Iterator[SessionStore]:
    with SessionStore(home, clock=clock) as opened:
        yield opened


@contextmanager
def old_store(home: Path, version: int) -> Iterator[sqlite3.Connection]:
    """A store in a new ``home`` as a zcoder of schema ``version`` left it: the with-block
    fills it in one transaction; then it is closed, at that version still, and private."""
    home.mkdir(mode=0o700)
    path = home / STORE_FILE_NAME
    conn = sqlite3.connect(path)
    with conn:
        migrate(conn, MIGRATIONS[:version])
        yield conn
    assert read_version(conn) == version
    conn.close()
    path.chmod(0o600)
