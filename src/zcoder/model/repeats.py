"""The repeated-line guard: a streamed reply that loops on the same text is cut.

A small model can fall into writing one line (or one short chunk, without newlines) again
and again until the output cap, minutes later: ``numpy-2.12-py38-py38,`` for 2 min 22 s
in one session. :class:`RepeatGuard` is fed the reply as it streams and trips when its
end is one *unit* (a run of text: a line, several lines, or a chunk inside a line)
repeated back to back ``MIN_REPEATS`` times and at least ``MIN_LOOP_CHARS`` characters.

What legitimately repeats must not trip it: a unit needs ``MIN_DISTINCT`` different
visible characters, so blank lines, ``}``, ``----``, ``====`` or ``-=-=`` never count;
table rows and list items differ from one another, so they never repeat back to back.

When it trips, ``kept`` is the reply up to the end of the unit's first copy: what came
before the loop, and the looping text once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["MIN_LOOP_CHARS", "MIN_REPEATS", "Loop", "RepeatGuard"]


@dataclass(frozen=True)
class Loop:
    """A loop found: the repeated ``unit``, its ``copies`` and the reply to keep."""

    unit: str
    copies: int
    kept: str

    def note(self) -> str:
        """The line the cut reply ends with, which the model reads (the user sees the
        whole reason once, as the turn's error)."""
        return f"[zcoder stopped this reply: the text above repeated {self.copies} times]"

    def describe(self) -> str:
        """The sentence the user and the model get."""
        line = self.unit.strip().splitlines()[0] if self.unit.strip() else self.unit
        shown = line if len(line) <= 60 else line[:57] + "..."
        return (
            f"the reply was stopped: it repeated {shown!r} {self.copies} times in a row "
            "(a loop); the text before the loop is kept, the repeated text once"
        )


# A loop is a unit repeated back to back MIN_REPEATS times and MIN_LOOP_CHARS characters
# (a short unit must repeat more); a unit has at least MIN_DISTINCT different visible
# characters (separators and braces never loop) and at most MAX_UNIT_CHARS (a paragraph).
# The reply's end is looked at every CHECK_EVERY characters streamed.
MIN_REPEATS: Final = 12
MIN_LOOP_CHARS: Final = 400
MIN_DISTINCT: Final = 4
MAX_UNIT_CHARS: Final = 400
CHECK_EVERY: Final = 32


class RepeatGuard:
    """Fed a reply's text as it streams; ``feed`` returns a Loop once the end loops."""

    def __init__(self) -> None:
        self._text = ""
        self._unchecked = 0

    def feed(self, text: str) -> Loop | None:
        self._text += text
        self._unchecked += len(text)
        if self._unchecked < CHECK_EVERY:
            return None
        self._unchecked = 0
        return self.check()

    def check(self) -> Loop | None:
        """Whether the text so far ends in a loop (any unit length)."""
        text = self._text
        for size in range(1, min(MAX_UNIT_CHARS, len(text) // MIN_REPEATS) + 1):
            loop = self._loop_of(text, size)
            if loop is not None:
                return loop
        return None

    def _loop_of(self, text: str, size: int) -> Loop | None:
        """The loop when the text's end repeats its last ``size`` characters (any rotation
        of the unit: the stream may stop mid-copy), cheap tests first."""
        if text[-1] != text[-1 - size] or text[-size:] != text[-2 * size : -size]:
            return None
        tail = text[-size:]
        if len({c for c in tail if not c.isspace()}) < MIN_DISTINCT:
            return None
        copies = max(MIN_REPEATS, -(-MIN_LOOP_CHARS // size))
        if len(text) < size * copies or text[-size * copies :] != tail * copies:
            return None
        start = len(text) - size * copies
        while start > 0 and text[start - 1] == text[start - 1 + size]:
            start -= 1
        line_start = text.find("\n", start, start + size)
        if 0 <= line_start < start + size - 1:  # a unit of lines: begin it at a line
            start = line_start + 1
        unit = text[start : start + size]
        return Loop(unit, (len(text) - start) // size, text[: start + size])
