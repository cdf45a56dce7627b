"""Where a repository's board lives: one per repository, under ``$ZCODER_HOME/boards``.

A repository is known by its canonical *common* git directory, so every worktree of it
(``git worktree add``) shares one board; a directory outside git is its own repository.
The directory is found by reading ``.git`` as git does (a directory, or a file saying
``gitdir: …`` whose ``commondir`` names the main one), never by running git in a
repository that may be hostile.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Final

BOARDS_DIR: Final = "boards"
MAX_POINTER_BYTES: Final = 4096
"""A ``.git`` file or a ``commondir`` file is one short line."""


def _pointer(path: Path) -> str | None:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_POINTER_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_POINTER_BYTES:
        return None
    return data.decode("utf-8", "replace").strip()


def _common(gitdir: Path) -> Path:
    shared = _pointer(gitdir / "commondir") if (gitdir / "commondir").is_file() else None
    return (gitdir / shared).resolve() if shared else gitdir.resolve()


def repository_of(workspace: Path) -> Path:
    """The canonical common git directory of the repository holding ``workspace``, or
    ``workspace`` itself (resolved) when no repository holds it."""
    start = workspace.resolve()
    for candidate in (start, *start.parents):
        dot = candidate / ".git"
        if dot.is_dir():
            return _common(dot)
        if dot.is_file():
            text = _pointer(dot) or ""
            if text.startswith("gitdir:"):
                return _common(candidate / text.removeprefix("gitdir:").strip())
    return start


def board_dir(home: Path, repository: Path) -> Path:
    """The board's directory for ``repository``: a readable name and a hash of the path."""
    project = repository.parent if repository.name == ".git" else repository
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", project.name)[:40].strip("-.") or "root"
    digest = hashlib.sha256(str(repository).encode("utf-8", "surrogateescape")).hexdigest()
    return home / BOARDS_DIR / f"{slug}-{digest[:16]}"
