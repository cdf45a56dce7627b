"""The hook tests' directories: a private zcoder home and a workspace, both under tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """$ZCODER_HOME (not created: zcoder makes it when it first writes there)."""
    return tmp_path / "home"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path
