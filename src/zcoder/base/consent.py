"""The user's one-time consent to what a repository would run: one book for every kind.

A project file comes with the repository (``.mcp.json`` names servers to start,
``.zcoder/settings.json`` hooks to run): cloning a repository must not be enough to run a
program it names. So such a program runs only after the user said yes to it, in this
workspace, for exactly the content of its entry. The book keeps, per workspace and per
entry key, a digest of the entry's canonical content (``digest_of``) and the answer: an
entry changed since (another command, another argument) asks again. A no is kept the same
way, so the user is not asked at every turn.

One file per kind, the same format for all (``{"version": 1, "workspaces": {WORKSPACE:
{KEY: {"hash", "decision"}}}}``): ``mcp-consent.json`` (zcoder.mcp.consent) and
``hook-consent.json`` (zcoder.hooks.consent), in ``$ZCODER_HOME``. Each is written like the
relay's trust.json: 0600, atomically (a temporary file renamed over it), and read only when
it is a regular file of this user (zcoder.base.safefile), so another local user cannot
plant a yes in it. Nothing here knows the App: the TUI, ``--prompt``, ``--acp`` and the
command line all read the same answers.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from zcoder.base.errors import ZcoderError
from zcoder.base.safefile import UnsafeFile, read_own_file, replace_with

__all__ = [
    "Consent",
    "ConsentError",
    "ConsentFile",
    "digest_of",
    "read_workspaces",
    "write_private_json",
]

MAX_CONSENT_BYTES: Final = 1024 * 1024


class ConsentError(ZcoderError):
    """The answers cannot be kept (no home, an unusable file); the message says why."""


class Consent(StrEnum):
    """Where an entry stands with the user."""

    NOT_NEEDED = "not needed"
    """An entry of the user's own file: the user wrote it."""
    GRANTED = "granted"
    REFUSED = "refused"
    UNASKED = "not yet asked"
    """A project entry whose content (as it is now) the user has not answered about."""


def digest_of(raw: Mapping[str, Any]) -> str:
    """A digest of an entry's canonical JSON: consent is given to exactly this content."""
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def write_private_json(path: Path, data: dict[str, Any], mode: int) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it); OSError
    when it cannot be written (nothing half-written stays)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    replace_with(temporary, path, text.encode("utf-8"), mode)


Table = dict[str, dict[str, dict[str, str]]]


def read_workspaces(path: Path | None, limit: int) -> tuple[dict[Any, Any], str | None]:
    """The ``workspaces`` table of a file of per-workspace choices (a consent file, or
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


class ConsentFile:
    """Per workspace, per entry key: the digest the user answered and the answer."""

    def __init__(self, home: Path | None, name: str, *, what: str) -> None:
        """``name``: the file in ``home``; ``what``: the entries, for messages
        ("project servers", "project hooks")."""
        self.path = home / name if home is not None else None
        self.what = what
        self._lock = threading.Lock()
        self.problem: str | None = None

    def _load(self) -> Table:
        workspaces, problem = read_workspaces(self.path, MAX_CONSENT_BYTES)
        if problem is not None:
            self.problem = f"{problem}; {self.what} ask again"
            return {}
        self.problem = None
        out: Table = {}
        for workspace, entries in workspaces.items():
            if isinstance(workspace, str) and isinstance(entries, dict):
                out[workspace] = {
                    key: answer
                    for key, answer in entries.items()
                    if isinstance(answer, dict)
                    and isinstance(answer.get("hash"), str)
                    and answer.get("decision") in (Consent.GRANTED, Consent.REFUSED)
                }
        return out

    def _save(self, table: Table) -> None:
        assert self.path is not None
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_private_json(self.path, {"version": 1, "workspaces": table}, 0o600)
        except OSError as exc:
            raise ConsentError(f"could not save {self.path}: {exc.strerror or exc}") from exc

    def _loaded_for_change(self) -> Table:
        table = self._load()
        if self.problem is not None:
            raise ConsentError(f"{self.problem}: fix or remove it first")
        return table

    def status(self, workspace: Path, key: str, digest: str) -> Consent:
        """Whether the entry ``key`` with content ``digest`` may run in ``workspace``."""
        with self._lock:
            answer = self._load().get(str(workspace), {}).get(key)
        if answer is None or answer.get("hash") != digest:
            return Consent.UNASKED
        return Consent(answer["decision"])

    def record(self, workspace: Path, key: str, digest: str, decision: Consent | None) -> None:
        """Keep the user's answer for this content of ``key``; None forgets it."""
        if self.path is None:
            raise ConsentError(f"there is no zcoder home to keep consent to {self.what} in")
        if decision not in (Consent.GRANTED, Consent.REFUSED, None):
            raise ValueError(f"not an answer: {decision!r}")
        with self._lock:
            table = self._loaded_for_change()
            entries = table.setdefault(str(workspace), {})
            if decision is None:
                entries.pop(key, None)
            else:
                entries[key] = {"hash": digest, "decision": decision.value}
            if not entries:
                del table[str(workspace)]
            self._save(table)

    def forget_workspace(self, workspace: Path) -> int:
        """Forget every answer given in ``workspace``; how many there were."""
        if self.path is None:
            return 0
        with self._lock:
            table = self._loaded_for_change()
            removed = table.pop(str(workspace), {})
            if removed:
                self._save(table)
        return len(removed)
