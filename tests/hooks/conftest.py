"""The hook tests' directories: a private zcoder home and a workspace, both under tmp_path."""

from __future__ import annotations

from tests.fixtures.workspace import home, workspace

__all__ = ["home", "workspace"]
