"""Long runs of blanks and of empty lines, shown as one visible marker with their length.

Text shown for a decision (a command, a message, an MCP tool's description) must not be
able to push what follows out of sight with padding: 590 empty lines in a tool's
description would hide the arguments and the keys of the dialog below it. So a run of at
least ``BLANK_RUN`` spaces and tabs becomes ``⟨40 spaces⟩``, and a run of at least
``BLANK_LINES_RUN`` line breaks with only blanks between them becomes a line of its own,
``⟨589 empty lines⟩``. The one rule for every front end: the TUI's dialogs style the
markers (tui/widgets/shared.content_text), text-only approvers (an editor's permission request)
get them as plain text (``mark_blank_runs``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from zcoder.base.plural import counted

__all__ = ["BLANK_LINES_RUN", "BLANK_RUN", "blank_runs", "mark_blank_runs"]

BLANK_RUN: Final = 8
BLANK_LINES_RUN: Final = 3

_BLANKS = re.compile(rf"[ \t]{{{BLANK_RUN},}}")
_BLANK_LINES = re.compile(rf"(?:[ \t]*\n){{{BLANK_LINES_RUN},}}")
_EITHER = re.compile(f"{_BLANK_LINES.pattern}|{_BLANKS.pattern}")


def _marker(run: str) -> str:
    if "\n" in run:
        return f"⟨{counted(run.count(chr(10)) - 1, 'empty line')}⟩"
    spaces, tabs = run.count(" "), run.count("\t")
    parts = []
    if spaces:
        parts.append(counted(spaces, "space"))
    if tabs:
        parts.append(counted(tabs, "tab"))
    return "⟨" + " + ".join(parts) + "⟩"


def blank_runs(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` in pieces, each with whether it is a marker (the rest is as it was). A run
    of empty lines becomes a line break, its marker, a line break."""
    position = 0
    for match in _EITHER.finditer(text):
        yield text[position : match.start()], False
        run = match.group()
        if "\n" in run:
            yield "\n", False
            yield _marker(run), True
            yield "\n", False
        else:
            yield _marker(run), True
        position = match.end()
    yield text[position:], False


def mark_blank_runs(text: str) -> str:
    """``text`` with its long runs of blanks and empty lines as markers, for plain text."""
    return "".join(piece for piece, _marker in blank_runs(text))
