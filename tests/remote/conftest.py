"""A private world per test, as the end-to-end tests have it (tests/e2e/harness.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.harness import World
from tests.e2e.harness import world as make_world


@pytest.fixture
def world() -> Iterator[World]:
    with make_world() as w:
        yield w
