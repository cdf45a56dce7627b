from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.workspace import home, workspace
from zcoder.sessions import SessionStore

__all__ = ["home", "workspace"]  # the shared fixtures: a zcoder home and a project


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
