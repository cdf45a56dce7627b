"""Project instructions: the files users already keep for coding agents.

Read in this order, general first, nearest last (nearer ones win where they disagree):
``$ZCODER_HOME/AGENTS.md``, then each folder from the repository's root (the git root, or
the workspace outside git) down to the workspace. In each folder one file counts:
``AGENTS.override.md`` (it replaces that folder's AGENTS.md, as in Codex), else
``AGENTS.md``, else Claude Code's ``CLAUDE.md`` or ``.claude/CLAUDE.md``. Claude Code's
``@path`` imports in them are followed (zcoder.agent.mentions finds them): relative to
the file, at most ``MAX_IMPORT_DEPTH`` deep, a cycle refused.

A repository's file is somebody else's text: it is read only when it resolves, symlinks
followed, inside the repository (an import of ``@../../.ssh/id_rsa`` or a link out is
not read, and a notice says so), and only a regular UTF-8 file (zcoder.tools.confinement
opens it). All of them together take at most ``MAX_INSTRUCTIONS_BYTES``, and at most
``WINDOW_SHARE`` of the context window once it is known: the nearest files keep their
room first, and what is cut is said (``InstructionSet.notices``). The listing
(``describe``) is /instructions' and ``--print-instructions``' text.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Final

from zcoder.agent.mentions import find_mentions
from zcoder.base.plural import byte_size, counted
from zcoder.base.sanitize import visible
from zcoder.model.tokens import estimate_tokens
from zcoder.tools.confinement import (
    ConfinementError,
    canonical_workspace,
    open_read,
    read_limited,
    resolve_path,
)
from zcoder.tools.files import decode_text

INSTRUCTIONS_FILE: Final = "AGENTS.md"
OVERRIDE_FILE: Final = "AGENTS.override.md"
CLAUDE_FILES: Final = ("CLAUDE.md", ".claude/CLAUDE.md")
MAX_INSTRUCTIONS_BYTES: Final = 32 * 1024
"""All instruction files together, at most (the nearest keep their room first)."""
WINDOW_SHARE: Final = 0.2
"""Instructions take at most this share of the context window (in tokens)."""
MAX_IMPORT_DEPTH: Final = 5
"""Imports within imports, as deep as Claude Code follows them."""
MAX_FILES: Final = 64
"""Files read in all (imports included); more are listed as skipped."""


@dataclass(frozen=True)
class InstructionFile:
    path: Path
    text: str
    truncated: bool = False
    size: int = 0  # the file's bytes, before any cut
    why: str = ""  # how it came in: "zcoder home", "imported by …", "no AGENTS.md here"
    group: int = 0  # its folder's place in the chain: 0 general … nearest last


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str
    said: bool = True  # a notice at start-up (an import that names nothing is only listed)


@dataclass(frozen=True)
class InstructionSet:
    files: tuple[InstructionFile, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    found_for: tuple[Path, Path] | None = None  # the workspace and home they were read for

    def reloaded(self) -> InstructionSet:
        """The files read again (after /init wrote one); as they are when never read."""
        return self if self.found_for is None else load_instructions(*self.found_for)

    def __bool__(self) -> bool:
        return bool(self.files)

    def fitted(self, window: int | None) -> InstructionSet:
        """The files cut to ``WINDOW_SHARE`` of ``window`` (tokens), nearest first."""
        if not window:
            return self
        return _fitted(self, int(window * WINDOW_SHARE))

    def render(self, window: int | None = None) -> str:
        """The system prompt's part: each file under a heading naming it."""
        parts = []
        for item in self.fitted(window).files:
            note = f" ({item.why})" if item.why.startswith("imported") else ""
            note += " (cut to fit the instructions' limit)" if item.truncated else ""
            parts.append(f"## From {item.path}{note}\n\n{item.text.strip()}")
        return "\n\n".join(parts)

    def notices(self, window: int | None = None) -> list[str]:
        """What the user is told: files cut or left out, and imports refused."""
        said = [
            f"instructions: {visible(str(s.path))} was not read: {s.reason}"
            for s in self.skipped
            if s.said
        ]
        for item in self.fitted(window).files:
            if item.truncated:
                kept = len(item.text.encode())
                said.append(
                    f"instructions: {visible(str(item.path))} was cut to "
                    f"{byte_size(kept)} of {byte_size(item.size)} ({limit_text(window)})"
                )
        return said


@lru_cache(maxsize=16)
def _fitted(instructions: InstructionSet, tokens: int) -> InstructionSet:
    left = tokens
    kept: dict[int, InstructionFile] = {}
    for index in _nearest_first(instructions.files):
        item = instructions.files[index]
        need = estimate_tokens(item.text)
        if need <= left:
            kept[index], left = item, left - need
            continue
        share = int(len(item.text) * left / max(need, 1))
        if share > 0:
            kept[index] = replace(item, text=item.text[:share], truncated=True)
        left = 0
    return replace(instructions, files=tuple(kept[i] for i in sorted(kept)))


def _nearest_first(files: Sequence[InstructionFile]) -> list[int]:
    """Indexes of ``files``: the nearest folder's first, each folder's in its order."""
    return sorted(range(len(files)), key=lambda i: (-files[i].group, i))


def limit_text(window: int | None) -> str:
    cap = f"at most {MAX_INSTRUCTIONS_BYTES // 1024} KiB"
    if not window:
        return cap
    share = int(window * WINDOW_SHARE)
    return f"{cap}, and a fifth of the {window:,}-token window: {share:,} tokens"


def git_root(workspace: Path) -> Path | None:
    for candidate in (workspace, *workspace.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _chain(workspace: Path) -> tuple[Path, list[Path]]:
    """The repository's root and the folders from it down to the workspace."""
    root = git_root(workspace) or workspace
    folders = [workspace, *workspace.parents]
    return root, list(reversed(folders[: folders.index(root) + 1]))


@dataclass
class _ChainReader:
    """Reads one folder's file and its imports, within its root, into ``files``."""

    files: list[InstructionFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)

    def folder(self, folder: Path, root: Path | None, group: int, names: Sequence[str]) -> None:
        """``folder``'s one file (the first of ``names`` there) and its imports, confined
        to ``root``; None: the user's own folder, confined to where its file really is."""
        present = [name for name in names if os.path.lexists(folder / name)]
        if not present:
            return
        chosen = present[0]
        for other in present[1:]:  # listed by /instructions, so none goes unexplained
            reason = f"{chosen} replaces it" if other == INSTRUCTIONS_FILE else f"{chosen} is read"
            self.skipped.append(Skipped(folder / other, reason, said=False))
        why = {OVERRIDE_FILE: f"replaces {INSTRUCTIONS_FILE}", INSTRUCTIONS_FILE: ""}.get(
            chosen, f"no {INSTRUCTIONS_FILE} here"
        )
        if root is None:
            why = "zcoder home" + (f", {why}" if why else "")
            root = _canonical(Path(os.path.realpath(folder / chosen)).parent) or folder
        self.read(folder / chosen, root, group, why, ())

    def read(self, path: Path, root: Path, group: int, why: str, stack: tuple[Path, ...]) -> None:
        if len(self.files) >= MAX_FILES:
            self.skipped.append(Skipped(path, f"more than {MAX_FILES} instruction files"))
            return
        try:
            target = resolve_path(root, str(path))
        except ConfinementError:
            where = "its folder" if why.startswith("zcoder") else "the repository"
            self.skipped.append(Skipped(path, f"it leads outside {where} ({root})"))
            return
        if target.absolute in stack:
            self.skipped.append(Skipped(path, "an import cycle"))
            return
        if target.absolute in self.seen:
            return  # read already (imported twice): once is enough
        try:
            with open_read(target) as handle:
                data = read_limited(handle, MAX_INSTRUCTIONS_BYTES + 1)
                size = max(os.fstat(handle.fileno()).st_size, len(data))
            text = decode_text(data, str(path))
        except FileNotFoundError:
            self.skipped.append(Skipped(path, "there is no such file", not stack))
            return
        except (ConfinementError, OSError) as exc:
            reason = str(exc) if isinstance(exc, ConfinementError) else exc.strerror or str(exc)
            self.skipped.append(Skipped(path, reason))
            return
        self.seen.add(target.absolute)
        self.files.append(InstructionFile(path, text, size=size, why=why, group=group))
        stack = (*stack, target.absolute)
        for mention in find_mentions(text):  # Claude Code's @imports, relative to the file
            readings = [
                Path(os.path.expanduser(typed)) if typed.startswith("~") else Path(typed)
                for typed in mention.paths
            ]
            readings = [target.absolute.parent / reading for reading in readings]
            imported = next((p for p in readings if os.path.lexists(p)), readings[0])
            imported = Path(os.path.normpath(imported))  # shown as the place it names
            if len(stack) > MAX_IMPORT_DEPTH:
                reason = f"imports go at most {MAX_IMPORT_DEPTH} deep"
                self.skipped.append(Skipped(imported, reason))
                continue
            self.read(imported, root, group, f"imported by {path}", stack)


def load_instructions(workspace: Path, home: Path) -> InstructionSet:
    """The instruction files for ``workspace``, capped at ``MAX_INSTRUCTIONS_BYTES``."""
    reader = _ChainReader()
    home_dir = _canonical(home)
    if home_dir is not None:
        reader.folder(home_dir, None, 0, (OVERRIDE_FILE, INSTRUCTIONS_FILE))
    root, folders = _chain(workspace)
    repository = _canonical(root) or root
    for group, folder in enumerate(folders, start=1):
        if folder == home_dir:
            continue
        reader.folder(folder, repository, group, (OVERRIDE_FILE, INSTRUCTIONS_FILE, *CLAUDE_FILES))
    found = InstructionSet(tuple(reader.files), tuple(reader.skipped), (workspace, home))
    return _capped(found)


def _canonical(path: Path) -> Path | None:
    try:
        return canonical_workspace(path)
    except ConfinementError:
        return None


def _capped(found: InstructionSet) -> InstructionSet:
    """The files within ``MAX_INSTRUCTIONS_BYTES``, the nearest keeping their room first."""
    budget = MAX_INSTRUCTIONS_BYTES
    kept: dict[int, InstructionFile] = {}
    for index in _nearest_first(found.files):
        if budget <= 0:
            break
        item = found.files[index]
        data = item.text.encode()
        if len(data) > budget:
            text = data[:budget].decode("utf-8", errors="ignore")
            item = replace(item, text=text, truncated=True)
        elif item.size > len(data):
            item = replace(item, truncated=True)
        budget -= len(item.text.encode())
        kept[index] = item
    left_out = tuple(
        Skipped(
            found.files[i].path, f"the instructions' {MAX_INSTRUCTIONS_BYTES // 1024} KiB are full"
        )
        for i in range(len(found.files))
        if i not in kept
    )
    files = tuple(kept[i] for i in sorted(kept))
    return replace(found, files=files, skipped=found.skipped + left_out)


def describe_instructions(instructions: InstructionSet, window: int | None = None) -> str:
    """What was loaded from where, in the order the model reads it, with sizes; then what
    was skipped and why (paths made visible: they are the repository's names)."""
    fitted = instructions.fitted(window)
    if not fitted.files and not instructions.skipped:
        return (
            "No instruction files apply to this workspace (AGENTS.md, AGENTS.override.md or "
            "CLAUDE.md from the repository's root down to it, or $ZCODER_HOME/AGENTS.md). "
            "/init drafts an AGENTS.md."
        )
    lines = ["Instruction files, in the order the model reads them (nearer ones win):"]
    for number, item in enumerate(fitted.files, start=1):
        size = byte_size(item.size)
        if item.truncated:
            size = f"{byte_size(len(item.text.encode()))} of {size}, cut"
        why = f" · {item.why}" if item.why else ""
        lines.append(f"  {number}. {visible(str(item.path))} ({size}){visible(why)}")
    total = sum(len(item.text.encode()) for item in fitted.files)
    lines.append(f"In all {byte_size(total)}; the limit: {limit_text(window)}.")
    if instructions.skipped:
        lines.append(f"Not read ({counted(len(instructions.skipped), 'file')}):")
        for skip in instructions.skipped:
            lines.append(f"  {visible(str(skip.path))}: {visible(skip.reason)}")
    return "\n".join(lines)


def render_instructions(files: InstructionSet) -> str:
    return files.render()
