"""Diffs on screen: added lines green, removed red, hunk headers cyan, notes dim.

Diff lines hold file content, which the model wrote: every line passes ``screen_safe``
(or, in a dialog, ``content_text``, which also marks long runs of blanks) and becomes
plain ``Text``, never markup.
"""

from __future__ import annotations

from rich.text import Text

from zcoder.tui.widgets.shared import content_text, screen_safe


def diff_style(line: str) -> str:
    if line.startswith(("--- ", "+++ ")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    if line.startswith(("\\", "(", "…")):
        return "dim"
    return ""


def diff_text(text: str, *, reveal_blanks: bool = False) -> Text:
    """``text`` (unified diff lines) coloured line by line.

    ``reveal_blanks``: as a dialog shows content, long runs of blanks become a marker
    with their length, so nothing an approval covers is out of sight.
    """
    out = Text()
    for number, line in enumerate(text.split("\n")):
        if number:
            out.append("\n")
        piece = content_text(line) if reveal_blanks else Text(screen_safe(line))
        style = diff_style(line)
        if style:
            piece.stylize(style)
        out.append_text(piece)
    return out
