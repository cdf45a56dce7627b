"""The output of one command as the transcript keeps it: all of it up to a bound, in the
order printed, with the last lines ready for the entry's preview.

Pure bookkeeping, no Textual: the entry (tui/widgets/transcript.py ``CommandEntry``) feeds it the
pieces the command runner reports and asks for its tail; the full-output screen
(tui/dialogs/output.py) asks for all of it. A command that prints more than the bound keeps
its first and last parts, with a line saying how much was left out in between.
"""

from __future__ import annotations

from collections import deque
from typing import Final

__all__ = ["MAX_KEPT_CHARS", "CommandOutput", "as_printed"]

MAX_KEPT_CHARS: Final = 1_000_000
"""Characters of one command's output kept for the screen (half head, half tail)."""


def as_printed(line: str) -> str:
    """A line as a terminal leaves it: a carriage return (progress bars) starts it over."""
    line = line.rstrip("\r")
    return line.rsplit("\r", 1)[-1] if "\r" in line else line


class CommandOutput:
    """All output of one command, bounded to ``limit`` characters (head and tail)."""

    def __init__(self, limit: int = MAX_KEPT_CHARS) -> None:
        if limit < 2:
            raise ValueError("the limit must be at least 2 characters")
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.total = 0  # characters received
        self.newlines = 0
        self._ends_with_newline = False

    @property
    def dropped(self) -> int:
        """Characters received but not kept (between the head and the tail)."""
        return self.total - self._head_len - self._tail_len

    @property
    def lines(self) -> int:
        """Lines received; a last line without its line feed counts."""
        if self.total == 0:
            return 0
        return self.newlines + (0 if self._ends_with_newline else 1)

    def feed(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        self.newlines += text.count("\n")
        self._ends_with_newline = text.endswith("\n")
        room = self._head_limit - self._head_len
        if room > 0:
            part = text[:room]
            self._head.append(part)
            self._head_len += len(part)
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail_len > self._tail_limit:
            excess = self._tail_len - self._tail_limit
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_len -= len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_len -= excess

    def text(self) -> str:
        """Everything kept, with a line saying what was left out when the bound was hit."""
        head = "".join(self._head)
        tail = "".join(self._tail)
        if self.dropped <= 0:
            return head + tail
        return (
            f"{head}\n[… {self.dropped:,} characters not kept here (the screen keeps "
            f"{MAX_KEPT_CHARS:,} per command) …]\n{tail}"
        )

    def tail(self, count: int) -> tuple[list[str], int]:
        """The last ``count`` lines (as printed) and how many lines came before them."""
        if self.total == 0 or count <= 0:
            return [], self.lines
        pieces: list[str] = []
        found = 0
        sources = list(self._tail)[::-1]
        if self.dropped <= 0:
            sources += self._head[::-1]
        for piece in sources:
            pieces.append(piece)
            found += piece.count("\n")
            if found > count:
                break
        text = "".join(reversed(pieces)).replace("\r\n", "\n").removesuffix("\n")
        shown = [as_printed(line) for line in text.split("\n")[-count:]]
        return shown, max(0, self.lines - len(shown))
