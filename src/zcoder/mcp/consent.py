"""The user's one-time consent to the MCP servers a project's ``.mcp.json`` names.

A project server starts only after the user said yes to it, in this workspace, for exactly
the content of its entry (the digest of zcoder.mcp.config.entry_hash); a changed entry asks
again, and a no is kept the same way. The book itself is zcoder.base.consent's, shared with the
project hooks; the servers' answers stay in ``$ZCODER_HOME/mcp-consent.json``, in the format
they always had (keyed by server name), so no answer a user gave is lost.
"""

from __future__ import annotations

from pathlib import Path

from zcoder.base.consent import Consent, ConsentError, ConsentFile
from zcoder.mcp.config import McpConfigError, ServerEntry, entry_hash

__all__ = ["CONSENT_FILE", "Consent", "ConsentBook"]

CONSENT_FILE = "mcp-consent.json"


class ConsentBook:
    """Per workspace, per server name: the entry digest the user answered and the answer."""

    def __init__(self, home: Path | None) -> None:
        self._file = ConsentFile(home, CONSENT_FILE, what="project servers")
        self.path = self._file.path

    @property
    def problem(self) -> str | None:
        return self._file.problem

    def status(self, workspace: Path, entry: ServerEntry) -> Consent:
        """Whether ``entry`` (as it is now) may start in ``workspace``."""
        if entry.scope == "user":
            return Consent.NOT_NEEDED
        return self._file.status(workspace, entry.name, entry_hash(entry.raw))

    def record(self, workspace: Path, entry: ServerEntry, decision: Consent | None) -> None:
        """Keep the user's answer for this entry's content; None forgets it."""
        try:
            self._file.record(workspace, entry.name, entry_hash(entry.raw), decision)
        except ConsentError as exc:
            raise McpConfigError(str(exc)) from exc

    def forget_workspace(self, workspace: Path) -> int:
        """Forget every answer given in ``workspace``; how many there were."""
        try:
            return self._file.forget_workspace(workspace)
        except ConsentError as exc:
            raise McpConfigError(str(exc)) from exc
