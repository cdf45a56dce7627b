"""Where a command's paths lead: the directories a ``cd`` earlier in the line went to, and
the symbolic links ``ln`` made earlier in the line.

A relative path after ``cd /`` is a path under /, and ``h/*`` after ``ln -s ~ h`` is the
home; the rules alone see neither, so this layer of the walker checks each command's words
as written, through the links, and again from every remembered directory.
"""

from __future__ import annotations

import posixpath

from zcoder.tools.guard.containers import _bind_mount
from zcoder.tools.guard.evaluate import _Printer
from zcoder.tools.guard.model import _Scope, _Word
from zcoder.tools.guard.options import _operands
from zcoder.tools.guard.paths import (
    _WORKSPACE_ITSELF,
    _dangerous_target,
    _in_directory,
    _normalize,
    _relative,
)
from zcoder.tools.guard.rules import _check_simple
from zcoder.tools.guard.wrappers import _strip_wrappers
from zcoder.tools.guard.writes import _WRITER_TAKES, _written_files

_COPIERS = frozenset({"cp", "ln", "mv", "install", "rsync"})
"""Programs that make a file that runs as the file they were given."""

_MAX_CWDS = 16
"""Directories a line may cd into that are remembered (each adds a check per command)."""


class _Places(_Printer):
    """The walker's layer that checks a command's words from every place they may lead."""

    def catastrophes(self, texts: list[str], scope: _Scope, depth: int) -> None:
        texts = texts[:1] + [self.through_links(t) for t in texts[1:]]
        # After a cd earlier in the line, relative paths start there: checked first, so a
        # refusal names where the cd went (``cd; rm -rf .`` deletes the home); and from
        # the workspace too, since the cd may fail or have run in a subshell.
        stripped, _ = _strip_wrappers(texts)
        git = bool(stripped) and posixpath.basename(stripped[0]) == "git"  # has subcommands
        for cwd in reversed(self.cwds):
            moved = texts[:1] + [_in_directory(t, cwd) if _relative(t) else t for t in texts[1:]]
            _check_simple(texts if git else moved, self.workspace, self.warn, cwd)
        _check_simple(texts, self.workspace, self.warn)

    def change_directory(self, args: list[_Word]) -> None:
        """Remember where ``cd`` or ``pushd`` goes (a bare ``cd`` goes home)."""
        operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        target = operands[0] if operands else _Word("~")
        if not target.known or target.text in ("-", ""):
            return
        text = self.through_links(target.text)
        if _relative(text):
            base = self.cwds[-1] if self.cwds else self.workspace
            if base is None:
                return
            text = posixpath.join(base, text)
        if len(self.cwds) < _MAX_CWDS:
            self.cwds.append(text)

    def copies(self, name: str, args: list[str]) -> None:
        """Remember what ``cp``, ``ln``, ``mv`` or ``install`` makes of each source: run
        later in the line, the copy is the program it was made from."""
        if name not in _COPIERS:
            return
        made = _written_files(name, args)
        sources = _operands(args, _WRITER_TAKES - {"-s"})[:-1]  # ln -s, cp -s: no value
        if len(made) == 1 and sources:
            pairs = [(sources[-1], made[0])]
        else:
            pairs = [(s, m) for s, m in zip(sources, made, strict=False)]
        for source, copy in pairs:
            program = posixpath.basename(_normalize(self.program(source) or source))
            if program and program not in (".", ".."):
                self.programs[self.place(copy)] = program

    def program(self, path: str) -> str | None:
        """The program a copy or link made earlier in the line is, when ``path`` is one."""
        return self.programs.get(self.place(path)) if self.programs else None

    def place(self, path: str) -> str:
        """``path`` normalised, relative ones taken from the workspace."""
        if _relative(path) and self.workspace is not None:
            path = posixpath.join(self.workspace, path)
        return _normalize(path)

    def through_links(self, text: str) -> str:
        """``text`` with a link made earlier in the line replaced by where it points."""
        if not (self.links or self.mounts) or not text:
            return text
        normal = _normalize(text)
        for point, source in self.mounts.items():
            # A mount point is not a link: deleting it deletes what is mounted there.
            if normal == point or normal.startswith(point + "/"):
                return (source.rstrip("/") + normal[len(point) :]) or "/"
        for link, target in self.links.items():
            # The link itself (``rm -rf h``) is only the link; ``h/`` and ``h/*`` go through.
            if (normal == link and text.endswith("/")) or normal.startswith(link + "/"):
                return (target.rstrip("/") + normal[len(link) :]) or "/"
        return text

    def mount(self, name: str, args: list[str]) -> None:
        """Remember a bind mount (``mount --bind ~ a``); warn when it shows a catastrophic
        target: whatever deletes under the mount point deletes there."""
        found = _bind_mount(name, args)
        if found is None:
            return
        source, point = found
        self.mounts[_normalize(point)] = source
        reason = _dangerous_target(source, self.workspace)
        if reason is not None and reason not in _WORKSPACE_ITSELF:
            self.warn(f"{name} shows {reason} at {point!r}; whatever deletes there deletes it")

    def link(self, args: list[_Word]) -> None:
        """Remember the links ``ln`` makes; warn when one leads to a catastrophic target
        (``ln -s ~ h``: deleting ``h/*`` later deletes the home)."""
        texts = [w.text for w in args]
        operands = _operands(texts, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
        directory = next(
            (texts[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-t", "--target-directory")),
            None,
        )
        if directory is not None:
            pairs = [(t, posixpath.join(directory, posixpath.basename(t))) for t in operands]
        elif len(operands) == 1:
            pairs = [(operands[0], posixpath.basename(operands[0].rstrip("/")) or ".")]
        elif len(operands) == 2:
            pairs = [(operands[0], operands[1])]
        else:
            pairs = [
                (t, posixpath.join(operands[-1], posixpath.basename(t))) for t in operands[:-1]
            ]
        for target, link in pairs:
            self.links[_normalize(link)] = target
            reason = _dangerous_target(target, self.workspace)
            if reason is not None and reason not in _WORKSPACE_ITSELF:
                self.warn(
                    f"ln makes {link!r} lead to {reason}; whatever deletes through it deletes there"
                )
