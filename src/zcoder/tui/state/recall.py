"""Walking through earlier prompts (Up, Down) and searching them (Ctrl+R): the rules alone.

``Recall`` is a cursor over the history with one extra slot after the newest entry: the
draft, what the user was typing before going back. Like a shell's line editor, an entry the
user edits while walking keeps that edit until the prompt is sent (walking away and back
shows it again), and the draft is never lost: Down past the newest entry brings it back.
Sending a prompt forgets the walk.

``search`` finds an entry containing a query, newest first, for the reverse search.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


class Recall:
    def __init__(self, entries: Sequence[str]) -> None:
        self.entries = entries  # read live: the history grows as prompts are sent
        self._position: int | None = None  # None: at the draft
        self._draft = ""
        self._edits: dict[int, str] = {}

    @property
    def walking(self) -> bool:
        """True while an earlier prompt (not the draft) is shown."""
        return self._position is not None

    @property
    def position(self) -> int | None:
        return self._position

    def older(self, shown: str) -> str | None:
        """The entry before the one shown (``shown`` is the input's text now, kept as the
        draft or as an edit); None when there is none. Entries equal to the text shown
        are passed over: Up always changes something."""
        index = len(self.entries) if self._position is None else self._position
        index -= 1
        while index >= 0 and self._text(index) == shown:
            index -= 1
        return None if index < 0 else self._go(index, shown)

    def newer(self, shown: str) -> str | None:
        """The entry after the one shown, or the draft after the newest; None at the draft."""
        if self._position is None:
            return None
        index = self._position + 1
        while index < len(self.entries) and self._text(index) == shown:
            index += 1
        return self._go(None if index >= len(self.entries) else index, shown)

    def jump(self, index: int, shown: str) -> str:
        """Show entry ``index`` as found by a search (an edit made to it earlier is dropped)."""
        self._keep(shown)
        self._edits.pop(index, None)
        self._position = index
        return self.entries[index]

    def reset(self) -> None:
        """The prompt was sent: back to an empty draft, edits forgotten."""
        self._position = None
        self._draft = ""
        self._edits.clear()

    def _go(self, position: int | None, shown: str) -> str:
        self._keep(shown)
        self._position = position
        return self._draft if position is None else self._text(position)

    def _text(self, index: int) -> str:
        return self._edits.get(index, self.entries[index])

    def _keep(self, shown: str) -> None:
        if self._position is None:
            self._draft = shown
        elif shown != self.entries[self._position]:
            self._edits[self._position] = shown
        else:
            self._edits.pop(self._position, None)


@dataclass(frozen=True)
class Match:
    index: int  # in the entries
    start: int  # where the query starts in the entry
    end: int


def search(entries: Sequence[str], query: str, *, before: int | None = None) -> Match | None:
    """The newest entry older than ``before`` (all entries when None) containing ``query``;
    case is ignored unless the query has a capital letter (smart case)."""
    pattern = _pattern(query)
    if pattern is None:
        return None
    last = len(entries) if before is None else min(before, len(entries))
    for index in range(last - 1, -1, -1):
        if found := pattern.search(entries[index]):
            return Match(index, found.start(), found.end())
    return None


def search_newer(entries: Sequence[str], query: str, *, after: int) -> Match | None:
    """The oldest entry newer than ``after`` containing ``query`` (Ctrl+S, Down)."""
    pattern = _pattern(query)
    if pattern is None:
        return None
    for index in range(max(after + 1, 0), len(entries)):
        if found := pattern.search(entries[index]):
            return Match(index, found.start(), found.end())
    return None


def _pattern(query: str) -> re.Pattern[str] | None:
    if not query:
        return None
    flags = re.IGNORECASE if query == query.lower() else 0
    return re.compile(re.escape(query), flags)
