"""The MCP servers a user turned off in one workspace (``/mcp disable NAME``).

Turning a server off is the user's choice for this workspace, not an edit of a shared file:
``.mcp.json`` belongs to the repository and ``mcp.json`` to every project of the user. So
the choice is kept apart, in ``$ZCODER_HOME/mcp-disabled.json``, by workspace and server
name, and survives a restart. It is written like the consent file (0600, atomically) and
read only when it is this user's own regular file: nobody else can switch a server on or
off for the user. An unreadable file turns nothing off, and says so.
"""

from __future__ import annotations

import threading
from pathlib import Path

from zcoder.base.consent import read_workspaces
from zcoder.mcp.config import McpConfigError, write_json_atomically

__all__ = ["DISABLED_FILE", "DisabledBook"]

DISABLED_FILE = "mcp-disabled.json"
MAX_DISABLED_BYTES = 1024 * 1024


class DisabledBook:
    """Per workspace, the names of the servers the user turned off."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / DISABLED_FILE if home is not None else None
        self._lock = threading.Lock()
        self.problem: str | None = None

    def _load(self) -> dict[str, list[str]]:
        workspaces, problem = read_workspaces(self.path, MAX_DISABLED_BYTES)
        self.problem = f"{problem}; no server is turned off" if problem else None
        return {
            workspace: sorted({name for name in names if isinstance(name, str)})
            for workspace, names in workspaces.items()
            if isinstance(workspace, str) and isinstance(names, list)
        }

    def disabled(self, workspace: Path) -> frozenset[str]:
        with self._lock:
            return frozenset(self._load().get(str(workspace), ()))

    def set(self, workspace: Path, name: str, *, enabled: bool) -> None:
        """Turn ``name`` on or off in ``workspace``, kept for later sessions."""
        if self.path is None:
            raise McpConfigError("there is no zcoder home to keep the choice in")
        with self._lock:
            table = self._load()
            if self.problem is not None:
                raise McpConfigError(f"{self.problem}: fix or remove it first")
            names = set(table.get(str(workspace), ()))
            (names.discard if enabled else names.add)(name)
            if names:
                table[str(workspace)] = sorted(names)
            else:
                table.pop(str(workspace), None)
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_json_atomically(self.path, {"version": 1, "workspaces": table}, 0o600)
