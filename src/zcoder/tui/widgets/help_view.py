"""/help as the transcript shows it: each description wraps under itself.

``help_text`` (slash/registry.py) lays /help out in two columns, the forms and keys
padded to one width. A terminal narrower than a row wraps it, and a description's second
line would start at the left edge, under the commands, where it reads as one. Here every
row of the two columns wraps inside its description's column (a hanging indent); when that
column would be too narrow to read (NARROW_DESCRIPTION), the description goes under its
form instead, indented. Headings and anything else are drawn as they are.
"""

from __future__ import annotations

import re
from typing import Final

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from zcoder.tui.widgets.entries import Entry, system_text

__all__ = ["HangingRows", "HelpEntry"]

NARROW_DESCRIPTION: Final = 24
"""Below this many columns for the descriptions, each goes on the lines under its form."""
UNDER_INDENT: Final = 4
"""The indent of a description put under its form."""

# A row of the two columns: two spaces, the form or key (single spaces only), the padding
# (two or more spaces), the description.
_ROW: Final = re.compile(r"^  \S(?:\S| (?! ))*(?= {2,}\S) +")


class HangingRows:
    """A Rich renderable: ``text`` with its two-column rows wrapped under themselves."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        for line in self.text.split("\n", allow_blank=True):
            found = _ROW.match(line.plain)
            if found is None:
                yield line
                continue
            column = found.end()
            form, description = line[:column], line[column:]
            if width - column < NARROW_DESCRIPTION:
                form.rstrip()
                yield form
                form, column = Text(" " * UNDER_INDENT), UNDER_INDENT
            for number, wrapped in enumerate(description.wrap(console, width - column)):
                yield Text.assemble(form if number == 0 else " " * column, wrapped)


class HelpEntry(Entry):
    """/help's text in the transcript, drawn as ``HangingRows``."""

    def __init__(self, text: str) -> None:
        body = system_text(text)
        super().__init__("system", body)
        self.update(HangingRows(body))
