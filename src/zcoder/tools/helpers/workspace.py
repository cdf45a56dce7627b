"""What a helper agent changed in the workspace, as changes /diff shows and /undo takes back.

A helper writes files itself, outside zcoder's tools, so its edits are found by comparing
the workspace before and after it ran: every file a listing would show (``.gitignore``d
files and the skipped directories left out, symlinks never followed), with its size,
modification time and inode, and its content while the contents held stay within
``HELD_BYTES`` (each at most the journal's ``SNAPSHOT_MAX_BYTES``). Afterwards the files
whose stat changed, and the new and vanished ones, are compared by content; each one that
differs is a ``FileChange`` the edit journal records like a tool's write. A file whose
previous content was not held (too large, or past the budget) is recorded with the reason,
so /diff shows it changed and /undo says it cannot restore it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zcoder.tools.change import FileChange
from zcoder.tools.confinement import ConfinementError, resolve_write_target
from zcoder.tools.diffs import human_size
from zcoder.tools.edits import load_before
from zcoder.tools.ignore import IgnoreMatcher, walk
from zcoder.tools.offload import StopSignal

__all__ = ["HELD_BYTES", "MAX_FILES", "WorkspaceState", "changes_since"]

HELD_BYTES: Final = 128 * 1024 * 1024
"""The most file content held from before a helper ran; past it, changes cannot be undone."""
MAX_FILES: Final = 50_000
"""The most files looked at; a larger workspace's further files are not watched."""

Stat = tuple[int, int, int]  # size, mtime_ns, inode


@dataclass
class WorkspaceState:
    """The workspace's files at one moment: their stat, and the content held of each."""

    workspace: Path
    stats: dict[str, Stat] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    """Why a file's content was not held (too large, past the budget)."""

    @classmethod
    def take(
        cls, workspace: Path, stop: StopSignal | None = None, *, hold: bool = True
    ) -> WorkspaceState:
        """The files now; with ``hold``, their contents too (within the budget). Blocks."""
        state = cls(workspace)
        held = 0
        for entry in walk(workspace, "", IgnoreMatcher(workspace), stop):
            if entry.is_dir or entry.is_symlink:
                continue
            if len(state.stats) >= MAX_FILES:
                break
            try:
                info = os.lstat(workspace / entry.path)
            except OSError:
                continue
            state.stats[entry.path] = (info.st_size, info.st_mtime_ns, info.st_ino)
            if not hold:
                continue
            if held + info.st_size > HELD_BYTES:
                state.notes[entry.path] = (
                    f"the workspace is larger than the {human_size(HELD_BYTES)} a helper's "
                    "run keeps"
                )
                continue
            data, note = _read(workspace, entry.path)
            if data is None:
                state.notes[entry.path] = note or "it could not be read"
                continue
            state.contents[entry.path] = data
            held += len(data)
        return state


def _read(workspace: Path, path: str) -> tuple[bytes | None, str]:
    try:
        return load_before(resolve_write_target(workspace, path))
    except (ConfinementError, OSError) as exc:
        return None, str(exc)


def changes_since(before: WorkspaceState, stop: StopSignal | None = None) -> list[FileChange]:
    """What changed in the workspace since ``before`` was taken, file by file. Blocks."""
    workspace = before.workspace
    after = WorkspaceState.take(workspace, stop, hold=False)
    paths = sorted(set(before.stats) | set(after.stats))
    changes = []
    for path in paths:
        if before.stats.get(path) == after.stats.get(path):
            continue
        try:
            target = resolve_write_target(workspace, path)
        except ConfinementError:
            continue
        now, _ = _read(workspace, path) if path in after.stats else (None, "")
        if path in after.stats and now is None:
            continue  # too large (or unreadable) now: not a change the journal can hold
        was = before.contents.get(path)
        note = before.notes.get(path, "")
        if path not in before.stats:
            changes.append(FileChange(target, None, now))
        elif note:
            changes.append(FileChange(target, None, now, before_note=note))
        elif was != now:
            changes.append(FileChange(target, was, now))
    return changes
