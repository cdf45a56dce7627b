"""Fixtures for the tool tests: a real workspace in tmp_path, contexts and approvers."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures.workspace import new_dir, tool_context
from zcoder.tools import ToolContext

# ``workspace`` (an empty project directory) is tests/conftest.py's.


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = new_dir(tmp_path / "outside")
    (out / "secret.txt").write_text("outside secret\n")
    return out


MakeCtx = Callable[..., ToolContext]


@pytest.fixture
def make_ctx(workspace: Path) -> MakeCtx:
    """tool_context over the workspace: a user's coding turn unless told otherwise."""
    return functools.partial(tool_context, workspace)


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    return make_ctx()
