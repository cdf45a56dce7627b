"""Where the edit journal keeps its records and snapshots.

With a session store, under ``$ZCODER_HOME/edits/<session id>/`` (0700): ``journal.jsonl``,
one JSON record a line, appended and fsynced, and ``blobs/<sha256>``, each previous content
once, written to a temporary file, fsynced and renamed (0600). A line torn by a crash is
skipped when the journal is read back. Without a session store (or a session), in memory.

The journal is a separate file, not a table of the session store, so that snapshots of
large files do not grow the database every process shares; it is keyed by session id.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from zcoder.base.safefile import ensure_private_dir, replace_with

log = logging.getLogger(__name__)

__all__ = ["EDITS_DIR_NAME", "EditRecord", "EditStore", "sha256"]

EDITS_DIR_NAME: Final = "edits"
_FORMAT: Final = 1
_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_SHA: Final = re.compile(r"[0-9a-f]{64}")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class EditRecord:
    """One file changed by one tool call of one turn.

    ``before`` is the hash of the kept previous content, None when the file did not exist
    (or, with ``before_note``, when its content was not kept); ``after`` the hash of what
    was written, None when the call deleted the file.
    """

    turn: int
    tool: str
    path: str
    before: str | None
    after: str | None
    before_note: str = ""
    label: str = ""
    """What started the turn (the start of the user's prompt), to name it in /undo."""
    prompts: int | None = None
    """How many prompts the user's ledger held when the edit was made (the turn's own and
    any steering landed before it included), for /rewind to find the edits after a prompt;
    None in journals written before it."""

    @property
    def undoable(self) -> bool:
        return not self.before_note


class EditStore:
    """Records and snapshots of one session; ``directory`` None keeps them in memory."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._memory: dict[str, bytes] = {}
        self.records: list[EditRecord] = []
        self.undone: set[int] = set()
        """Turns /undo has taken back (the next /undo goes further back)."""
        self.undone_edits: set[int] = set()
        """Single records (by their place in ``records``) a /rewind took back, when it took
        back only part of their turn (the edits after a steering prompt)."""
        self.reverted: set[tuple[int, str]] = set()
        """(turn, path) of the files those undos restored; a file an undo kept as the user
        left it still shows its change in /diff."""
        self.moved: dict[int, int] = {}
        """Turns a /rewind took the conversation back past: their edits after the prompt it
        went back to (its position in the ledger) now count as made before it."""
        self.stored_bytes = 0
        if directory is not None:
            self._load()

    @classmethod
    def for_session(cls, home: Path | None, session_id: str | None) -> EditStore:
        if home is None or session_id is None or not _SESSION_ID.fullmatch(session_id):
            return cls(None)
        return cls(home / EDITS_DIR_NAME / session_id)

    # -- reading back ------------------------------------------------------------------

    def _load(self) -> None:
        assert self.directory is not None
        try:
            raw = (self.directory / "journal.jsonl").read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("edit journal not readable: %s", exc)
            return
        for number, line in enumerate(raw.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                self._apply(json.loads(line))
            except (ValueError, TypeError, KeyError) as exc:
                log.warning("edit journal line %d skipped: %s", number, exc)
        with contextlib.suppress(OSError):
            for blob in (self.directory / "blobs").iterdir():
                self.stored_bytes += blob.stat().st_size

    def _apply(self, entry: dict[str, Any]) -> None:
        if entry["kind"] == "undo":
            turn = int(entry["turn"])
            if "edits" in entry:
                self.undone_edits.update(map(int, entry["edits"]))
            else:
                self.undone.add(turn)
            self.reverted.update((turn, str(path)) for path in entry.get("restored", []))
            return
        if entry["kind"] == "rewind":
            self._move(map(int, entry["turns"]), int(entry["prompts"]))
            return
        if entry["kind"] != "edit":
            raise ValueError(f"unknown record kind {entry['kind']!r}")
        record = EditRecord(
            turn=int(entry["turn"]),
            tool=str(entry["tool"]),
            path=str(entry["path"]),
            before=_hash_or_none(entry["before"]),
            after=_hash_or_none(entry["after"]),
            before_note=str(entry.get("before_note", "")),
            label=str(entry.get("label", "")),
            prompts=None if entry.get("prompts") is None else int(entry["prompts"]),
        )
        self.records.append(record)

    # -- snapshots ---------------------------------------------------------------------

    def put(self, data: bytes) -> str:
        """Keep ``data``; returns its hash. What cannot be saved is kept in memory, for
        this process."""
        digest = sha256(data)
        if self.directory is not None:
            try:
                return self._save_blob(digest, data)
            except OSError as exc:
                log.warning("snapshot not saved (kept for this process only): %s", exc)
        if digest not in self._memory:
            self._memory[digest] = data
            self.stored_bytes += len(data)
        return digest

    def _save_blob(self, digest: str, data: bytes) -> str:
        assert self.directory is not None
        blobs = self.directory / "blobs"
        final = blobs / digest
        if final.exists():
            return digest
        ensure_private_dir(blobs)
        tmp = blobs / f".{digest}.{secrets.token_hex(4)}.tmp"
        replace_with(tmp, final, data, 0o600, durable=True)
        self.stored_bytes += len(data)
        return digest

    def get(self, digest: str) -> bytes | None:
        """A kept content, None when it is missing or does not match its hash."""
        if digest in self._memory or self.directory is None:
            return self._memory.get(digest)
        if not _SHA.fullmatch(digest):
            return None
        try:
            data = (self.directory / "blobs" / digest).read_bytes()
        except OSError:
            return None
        return data if sha256(data) == digest else None

    # -- records -----------------------------------------------------------------------

    def add(self, records: list[EditRecord]) -> None:
        """Record edits already made: kept in memory whatever happens, saved if possible
        (a journal that cannot be saved must not turn a done write into a failed call)."""
        self.records.extend(records)
        self._append([{"v": _FORMAT, "kind": "edit", **asdict(r)} for r in records])

    def mark_undone(self, turn: int, restored: list[str], edits: list[int] | None = None) -> None:
        """``turn`` was undone (``restored``: the files put back); ``edits``: only those
        records of it (their places in ``records``)."""
        entry: dict[str, Any] = {"v": _FORMAT, "kind": "undo", "turn": turn, "restored": restored}
        if edits is None:
            self.undone.add(turn)
        else:
            self.undone_edits.update(edits)
            entry["edits"] = edits
        self.reverted.update((turn, path) for path in restored)
        self._append([entry])

    def mark_rewound(self, turns: list[int], prompts: int) -> None:
        """The conversation went back to before the ledger's prompt ``prompts``: ``turns``
        now count as made before it."""
        self._move(turns, prompts)
        self._append([{"v": _FORMAT, "kind": "rewind", "turns": turns, "prompts": prompts}])

    def _move(self, turns: Iterable[int], prompts: int) -> None:
        for turn in turns:
            self.moved[turn] = min(self.moved.get(turn, prompts), prompts)

    def position(self, record: EditRecord) -> int | None:
        """Prompts in the ledger when ``record`` was made, as the conversation is now."""
        if record.prompts is None:
            return None
        return min(record.prompts, self.moved.get(record.turn, record.prompts))

    def _append(self, entries: list[dict[str, Any]]) -> None:
        if self.directory is None:
            return
        try:
            self._write_lines(entries)
        except OSError as exc:
            log.warning("edit journal not saved (kept for this process only): %s", exc)

    def _write_lines(self, entries: list[dict[str, Any]]) -> None:
        assert self.directory is not None
        ensure_private_dir(self.directory)
        text = "".join(json.dumps(entry, ensure_ascii=True) + "\n" for entry in entries)
        path = self.directory / "journal.jsonl"
        fd = os.open(
            path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                text = "\n" + text  # a line torn by a crash stays alone, and is skipped
            os.write(fd, text.encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)


def _hash_or_none(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _SHA.fullmatch(value):
        raise ValueError(f"not a content hash: {value!r:.80}")
    return value
