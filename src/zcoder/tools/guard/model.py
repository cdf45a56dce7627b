"""The guard's vocabulary: its verdicts, the refusal it raises, and the values its layers
pass to each other (an expanded word, a stream of text, what a line has defined so far).

Every other module of the guard imports from here and this module imports none of them, so
the layers above can share these types without importing each other in a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from tree_sitter import Node

_MAX_DEPTH = 8
_MAX_FIELDS = 4096
"""Brace expansion beyond this many words is refused rather than checked in part."""
_MAX_VALUE = 1 << 20
"""A variable's value beyond this many characters is refused rather than built."""


class Verdict(StrEnum):
    """What the guard says about a command."""

    ALLOW = "allow"
    WARN = "warn"
    """The guard cannot see what would run; the approval dialog shows why."""
    REFUSE = "refuse"


@dataclass(frozen=True)
class GuardVerdict:
    """The guard's verdict on one command line, with the reason for anything but allow."""

    verdict: Verdict
    reason: str | None = None

    @property
    def refused(self) -> bool:
        return self.verdict is Verdict.REFUSE


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Word:
    """One word after expansion: its text (unknown parts keep their source text)."""

    text: str
    known: bool = True
    decoded: bool = False
    """An unknown part came out of a decoder (base64, xxd, …)."""
    script: _Stream | None = None
    """For ``<(...)``: what reading the file would give."""


@dataclass(frozen=True)
class _Stream:
    """Text flowing into a command (stdin, a script): known, or where it came from."""

    text: str | None
    decoded: bool = False
    downloaded: bool = False
    piped: bool = True
    """False when nothing feeds the command (a shell then reads the terminal)."""
    found: tuple[str, ...] | None = None
    """For what ``find`` prints: its arguments (the paths printed are those they select)."""
    partial: str | None = None
    """When the text is not known: the parts of it that are (``(crontab -l; echo …)``)."""

    def describe(self) -> str:
        if self.downloaded:
            return "a download"
        if self.decoded:
            return "a decoder whose input the guard cannot see"
        return "a program's output or a file"


_UNKNOWN = _Stream(None)
_NO_INPUT = _Stream(None, piped=False)


@dataclass
class _Scope:
    """What the line defined so far: variables, aliases, functions, files written."""

    variables: dict[str, _Word] = field(default_factory=dict)
    """Values assigned in the line; unknown ones keep whether they came from a decoder."""
    arrays: dict[str, list[_Word]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    functions: dict[str, Node] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    positional: list[_Word] | None = None

    def with_env(self, env: dict[str, _Word]) -> _Scope:
        """This scope as a child process sees it with ``env`` added to its environment."""
        if not env:
            return self
        return _Scope(
            {**self.variables, **env},
            self.arrays,
            self.aliases,
            self.functions,
            self.files,
            self.positional,
        )

    def child(self, positional: list[_Word] | None) -> _Scope:
        return _Scope(
            self.variables, self.arrays, self.aliases, self.functions, self.files, positional
        )


@dataclass(frozen=True)
class _Segment:
    text: str
    literal: bool = False
    """From the command as written (a word or a quoted string), not an expansion."""
    quoted: bool = False
    known: bool = True
    decoded: bool = False
    script: _Stream | None = None


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


@dataclass(frozen=True)
class _Command:
    """One simple command as the rules see it: wrappers stripped, words expanded."""

    name: str
    """The program's name without its directory."""
    args: list[str]
    workspace: str | None
    warn: Callable[[str], None]
    cwd: str | None
    """Where a ``cd`` earlier in the line went; None for the workspace."""


@dataclass(frozen=True)
class _Call:
    """A simple command handed to its follower: its name (without a directory) and
    arguments, expanded, with its wrappers stripped."""

    name: str
    args: list[_Word]
    scope: _Scope
    inner: _Scope
    """The scope a child process sees: ``scope`` with the command's environment added."""
    depth: int
    stdin: _Stream
