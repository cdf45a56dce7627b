"""Unified diffs of file contents, as the transcript, /diff and the edit dialogs show them.

Text is compared line by line with :mod:`difflib`; content that is not UTF-8 text (a NUL
in its first bytes, or invalid UTF-8) and content too large to compare quickly get one
line saying so instead of a diff, never a silent blank.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from zcoder.base.plural import counted

__all__ = [
    "CONTEXT_LINES",
    "DIFF_MAX_BYTES",
    "FileDiff",
    "compact_lines",
    "file_diff",
    "human_size",
]

CONTEXT_LINES: Final = 3
"""Unchanged lines around each change, as ``git diff`` shows them."""
DIFF_MAX_BYTES: Final = 2 * 1024 * 1024
"""Larger contents (both sides together) are not compared: the diff says so instead."""
_BINARY_SNIFF: Final = 8192
_MAX_LINE_CHARS: Final = 400


def human_size(size: int) -> str:
    if size < 1024:
        return counted(size, "byte")
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


@dataclass(frozen=True)
class FileDiff:
    """The diff of one file: its unified lines (headers included) and what changed.

    ``note`` is set when there is no line diff to show (binary or too large content, or
    content that was not kept); ``lines`` then holds the headers and that note only.
    """

    path: str
    lines: tuple[str, ...]
    added: int
    removed: int
    note: str = ""

    @property
    def stats(self) -> str:
        """``+3 −1``: lines added and removed (``binary`` and the like when not counted)."""
        if self.note:
            return self.note
        return f"+{self.added} −{self.removed}"


def _as_text(data: bytes) -> str | None:
    if b"\x00" in data[:_BINARY_SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _clip(line: str) -> str:
    if len(line) <= _MAX_LINE_CHARS:
        return line
    return line[: _MAX_LINE_CHARS - 1] + "…"


def file_diff(
    path: str,
    before: bytes | None,
    after: bytes | None,
    *,
    before_note: str = "",
    after_note: str = "",
    context: int = CONTEXT_LINES,
    clip: bool = True,
) -> FileDiff:
    """The unified diff from ``before`` to ``after`` (None: the file does not exist).

    ``before_note`` and ``after_note`` say why an existing file's content is unknown (too
    large to keep, say); the diff then cannot be shown and says so. ``clip`` shortens very
    long lines (the transcript); a dialog that approves a write shows them whole.
    """
    old_name = "/dev/null" if before is None and not before_note else f"a/{path}"
    new_name = "/dev/null" if after is None else f"b/{path}"
    headers = (f"--- {old_name}", f"+++ {new_name}")

    def noted(note: str) -> FileDiff:
        return FileDiff(path, (*headers, f"({note})"), 0, 0, note)

    if before_note:
        return noted(f"previous content not kept: {before_note}")
    if after_note:
        return noted(after_note)
    old_bytes, new_bytes = before or b"", after or b""
    if len(old_bytes) + len(new_bytes) > DIFF_MAX_BYTES:
        return noted(
            f"too large to compare: {human_size(len(old_bytes))} → {human_size(len(new_bytes))}"
        )
    old_text, new_text = _as_text(old_bytes), _as_text(new_bytes)
    if old_text is None or new_text is None:
        return noted(f"binary content: {human_size(len(old_bytes))} → {human_size(len(new_bytes))}")
    old_lines = old_text.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    body: list[str] = []
    added = removed = 0
    # difflib's first two lines are its own ---/+++ headers: ours name the path.
    for raw in list(difflib.unified_diff(old_lines, new_lines, n=context, lineterm=""))[2:]:
        eol = raw.endswith("\n")
        line = raw.rstrip("\n").removesuffix("\r")
        if raw.startswith("+"):
            added += 1
        elif raw.startswith("-"):
            removed += 1
        body.append(_clip(line) if clip else line)
        if not eol and not raw.startswith("@@"):
            body.append("\\ No newline at end of file")
    return FileDiff(path, (*headers, *body), added, removed)


def compact_lines(diffs: Sequence[FileDiff], max_lines: int) -> list[str]:
    """The diffs' lines, at most ``max_lines`` of them, then ``… N more lines``."""
    lines = [line for diff in diffs for line in diff.lines]
    if len(lines) <= max_lines:
        return lines
    return [*lines[:max_lines], f"… {len(lines) - max_lines} more lines (/diff shows them all)"]
