"""The user's one-time consent to the MCP servers a project's ``.mcp.json`` names.

A project file comes with the repository: cloning a repository must not be enough to run a
program it names. So a project server starts only after the user said yes to it, in this
workspace, for exactly the content of its entry: the consent is kept as a digest of the
canonical entry (zcoder.mcp.config.entry_hash), and an entry changed since (another
command, another argument, another variable) asks again. A no is kept the same way, so the
user is not asked at every turn; a changed entry asks again.

The decisions live in ``$ZCODER_HOME/mcp-consent.json``, written like the relay's
trust.json: 0600, atomically (a temporary file renamed over it), and read only when it is
a regular file of this user (zcoder.relay.safefile), so another local user cannot plant a
yes in it.
"""

from __future__ import annotations

import json
import threading
from enum import StrEnum
from pathlib import Path
from typing import Any

from zcoder.mcp.config import McpConfigError, ServerEntry, entry_hash, write_json_atomically
from zcoder.relay.safefile import UnsafeFile, read_own_file

__all__ = ["CONSENT_FILE", "Consent", "ConsentBook", "read_workspaces"]

CONSENT_FILE = "mcp-consent.json"
MAX_CONSENT_BYTES = 1024 * 1024


def read_workspaces(path: Path | None, limit: int) -> tuple[dict[Any, Any], str | None]:
    """The ``workspaces`` table of a file of per-workspace choices (this one, or
    zcoder.mcp.switches'), read only when it is the user's own regular file; ({}, why)
    when it is unusable, ({}, None) when there is none."""
    if path is None or not path.exists():
        return {}, None
    try:
        data = json.loads(read_own_file(path, limit))
        workspaces = data.get("workspaces") if isinstance(data, dict) else None
        if not isinstance(workspaces, dict):
            raise ValueError("no workspaces table")
    except (UnsafeFile, ValueError, UnicodeDecodeError) as exc:
        return {}, f"{path} is unusable ({exc})"
    return workspaces, None


class Consent(StrEnum):
    """Where a server stands with the user."""

    NOT_NEEDED = "not needed"
    """A server of the user's own file: the user wrote it."""
    GRANTED = "granted"
    REFUSED = "refused"
    UNASKED = "not yet asked"
    """A project server whose entry (as it is now) the user has not answered about."""


class ConsentBook:
    """Per workspace, per server name: the entry digest the user answered and the answer."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / CONSENT_FILE if home is not None else None
        self._lock = threading.Lock()
        self.problem: str | None = None

    def _load(self) -> dict[str, dict[str, dict[str, str]]]:
        workspaces, problem = read_workspaces(self.path, MAX_CONSENT_BYTES)
        self.problem = f"{problem}; project servers ask again" if problem else None
        out: dict[str, dict[str, dict[str, str]]] = {}
        for workspace, servers in workspaces.items():
            if isinstance(workspace, str) and isinstance(servers, dict):
                out[workspace] = {
                    name: answer
                    for name, answer in servers.items()
                    if isinstance(answer, dict)
                    and isinstance(answer.get("hash"), str)
                    and answer.get("decision") in (Consent.GRANTED, Consent.REFUSED)
                }
        return out

    def status(self, workspace: Path, entry: ServerEntry) -> Consent:
        """Whether ``entry`` (as it is now) may start in ``workspace``."""
        if entry.scope == "user":
            return Consent.NOT_NEEDED
        with self._lock:
            answer = self._load().get(str(workspace), {}).get(entry.name)
        if answer is None or answer.get("hash") != entry_hash(entry.raw):
            return Consent.UNASKED
        return Consent(answer["decision"])

    def record(self, workspace: Path, entry: ServerEntry, decision: Consent | None) -> None:
        """Keep the user's answer for this entry's content; None forgets it."""
        if self.path is None:
            raise McpConfigError("there is no zcoder home to keep MCP consent in")
        if decision not in (Consent.GRANTED, Consent.REFUSED, None):
            raise ValueError(f"not an answer: {decision!r}")
        with self._lock:
            table = self._load()
            if self.problem is not None:
                raise McpConfigError(f"{self.problem}: fix or remove it first")
            servers = table.setdefault(str(workspace), {})
            if decision is None:
                servers.pop(entry.name, None)
            else:
                servers[entry.name] = {"hash": entry_hash(entry.raw), "decision": decision.value}
            if not servers:
                del table[str(workspace)]
            data: dict[str, Any] = {"version": 1, "workspaces": table}
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_json_atomically(self.path, data, 0o600)

    def forget_workspace(self, workspace: Path) -> int:
        """Forget every answer given in ``workspace``; how many there were."""
        if self.path is None:
            return 0
        with self._lock:
            table = self._load()
            if self.problem is not None:
                raise McpConfigError(f"{self.problem}: fix or remove it first")
            removed = table.pop(str(workspace), {})
            if removed:
                write_json_atomically(self.path, {"version": 1, "workspaces": table}, 0o600)
        return len(removed)
