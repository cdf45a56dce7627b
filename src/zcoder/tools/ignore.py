"""Which files list_files and the built-in search skip: fixed noise plus .gitignore rules.

The .gitignore subset implemented here (no git needed, so it works the same in a fresh
directory, a worktree or a tarball): blank lines and ``#`` comments, ``!`` negation,
trailing ``/`` for directories only, a leading or inner ``/`` anchoring the pattern to the
.gitignore's directory, ``*``, ``?``, ``[...]``, ``**`` (leading, trailing and inner), and
backslash escapes.  Nested .gitignore files apply below their own directory, and the last
matching rule wins.  As in git, a file inside an ignored directory cannot be re-included
(the directory is never walked).
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from zcoder.tools.confinement import ConfinementError, open_directory
from zcoder.tools.offload import StopSignal

__all__ = ["SKIPPED_DIRS", "IgnoreMatcher", "WalkEntry", "compile_gitignore_pattern", "walk"]

SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", "dist", "build",
        "target", ".next", ".cache", ".gradle", ".idea", ".eggs",
    }
)  # fmt: skip
"""Directories that are never listed or searched: VCS data, dependencies, build output."""

_MAX_GITIGNORE_BYTES = 256 * 1024


@dataclass(frozen=True)
class _Rule:
    base: str  # workspace-relative directory of the .gitignore, "" for the root
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _translate(glob: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if char == "\\" and index + 1 < len(glob):
            out.append(re.escape(glob[index + 1]))
            index += 2
            continue
        if char == "*":
            if glob.startswith("**", index):
                at_start = index == 0 or glob[index - 1] == "/"
                after = glob[index + 2 : index + 3]
                if at_start and after == "/":
                    out.append("(?:.*/)?")
                    index += 3
                    continue
                if at_start and after == "":
                    out.append(".*")
                    index += 2
                    continue
                out.append("[^/]*")
                index += 2
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find(
                "]", index + 2 if glob[index + 1 : index + 2] in ("!", "^") else index + 1
            )
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[index + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def compile_gitignore_pattern(line: str) -> tuple[re.Pattern[str], bool, bool] | None:
    """Compile one .gitignore line to (regex over the relative path, negate, dir_only).

    Returns None for blank lines and comments.  The regex matches a path relative to the
    .gitignore's directory, with ``/`` separators.
    """
    text = line.rstrip("\n").rstrip("\r")
    # Trailing spaces are ignored unless escaped.
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    if not text or text.startswith("#"):
        return None
    negate = text.startswith("!")
    if negate or text.startswith("\\!") or text.startswith("\\#"):
        text = text[1:]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    body = _translate(text)
    prefix = "" if anchored else "(?:.*/)?"
    try:
        regex = re.compile(f"^{prefix}{body}$", re.DOTALL)
    except re.error:
        return None
    return regex, negate, dir_only


@dataclass
class IgnoreMatcher:
    """Decides whether a workspace-relative path is skipped.

    Call :meth:`load_dir` for each directory as the walk enters it (parents first), so its
    .gitignore is read once and applies below it.
    """

    workspace: Path
    _rules: list[_Rule] = field(default_factory=list)
    _loaded: set[str] = field(default_factory=set)

    def load_dir(self, rel_dir: str) -> None:
        """Read ``rel_dir/.gitignore`` (if any) once; ``rel_dir`` is "" for the root."""
        if rel_dir in self._loaded:
            return
        self._loaded.add(rel_dir)
        path = self.workspace / rel_dir / ".gitignore" if rel_dir else self.workspace / ".gitignore"
        try:
            if path.is_symlink() or not path.is_file():
                return
            with open(path, "rb") as handle:
                data = handle.read(_MAX_GITIGNORE_BYTES)
        except OSError:
            return
        for line in data.decode("utf-8", errors="replace").splitlines():
            compiled = compile_gitignore_pattern(line)
            if compiled is not None:
                regex, negate, dir_only = compiled
                self._rules.append(_Rule(rel_dir, regex, negate, dir_only))

    def load_parents(self, rel_path: str) -> None:
        """Load the .gitignore of every directory from the root down to ``rel_path``."""
        self.load_dir("")
        parts = [part for part in rel_path.split("/") if part not in ("", ".")]
        for depth in range(1, len(parts) + 1):
            self.load_dir("/".join(parts[:depth]))

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """Whether ``rel_path`` (workspace-relative, ``/``-separated) is skipped."""
        name = rel_path.rsplit("/", 1)[-1]
        if is_dir and name in SKIPPED_DIRS:
            return True
        ignored = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base:
                if not rel_path.startswith(rule.base + "/"):
                    continue
                relative = rel_path[len(rule.base) + 1 :]
            else:
                relative = rel_path
            if rule.regex.match(relative):
                ignored = not rule.negate
        return ignored


@dataclass(frozen=True)
class WalkEntry:
    """One entry found by :func:`walk`: workspace-relative path and what it is."""

    path: str
    is_dir: bool
    is_symlink: bool


def walk(
    workspace: Path, start: str, matcher: IgnoreMatcher, stop: StopSignal | None = None
) -> Iterator[WalkEntry]:
    """Entries under the workspace-relative directory ``start``, breadth first, sorted.

    Breadth first so that a bounded listing shows the top levels before deep details.

    Skipped directories and ignored paths are left out (and never entered); symlinks are
    reported but never followed. With ``stop``, every directory entry read is a check
    point (``ToolStopped`` is raised there once it is set), so a huge directory or tree
    is left within one entry of the request.
    """
    check = stop.check if stop is not None else _no_check
    matcher.load_parents(start)
    queue: deque[str] = deque([start])
    while queue:
        rel_dir = queue.popleft()
        matcher.load_dir(rel_dir)
        parts = tuple(part for part in rel_dir.split("/") if part)
        try:
            # Listed through a descriptor opened without following symlinks, so a directory
            # swapped for a link during the walk is skipped rather than listed.
            with open_directory(workspace, parts) as dir_fd, os.scandir(dir_fd) as scan:
                listed = []
                for entry in scan:
                    check()
                    listed.append(
                        (entry.name, entry.is_symlink(), entry.is_dir(follow_symlinks=False))
                    )
                entries = sorted(listed)
        except (OSError, ConfinementError):
            continue
        subdirs: list[str] = []
        for name, is_link, is_dir in entries:
            check()
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if matcher.is_ignored(rel, is_dir):
                continue
            yield WalkEntry(rel, is_dir, is_link)
            if is_dir:
                subdirs.append(rel)
        queue.extend(subdirs)


def _no_check() -> None:
    pass
