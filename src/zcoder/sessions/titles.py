"""Session titles: derived from the first message the user typed, never from anything else."""

from __future__ import annotations

import unicodedata

DEFAULT_TITLE = ""
"""A session's title until the user's first prompt: none (a relayed task, a ``!command`` or
nothing at all never titles it). Sessions stored with the old placeholder ("New Job") read
back as untitled too (zcoder.sessions.session_table)."""

UNTITLED = "(no prompt yet)"
"""What a list shows for a session without a title: a description, not a made-up name."""
MAX_TITLE_CHARS = 42
ELLIPSIS = "…"


def title_from_user_message(text: str) -> str:
    """The title for a session whose first user message is ``text``.

    The first line with visible content, with runs of whitespace collapsed to one space
    (control characters count as whitespace: a title is one line of display text). A longer
    line is cut and ends with "…"; the ellipsis counts in the :data:`MAX_TITLE_CHARS` (42)
    characters.
    Returns "" when the text has no visible content (the session then keeps its default).
    """
    for raw_line in text.splitlines():
        visible = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in raw_line)
        line = " ".join(visible.split())
        if not line:
            continue
        if len(line) <= MAX_TITLE_CHARS:
            return line
        return line[: MAX_TITLE_CHARS - len(ELLIPSIS)].rstrip() + ELLIPSIS
    return ""


def shown_title(title: str) -> str:
    """What a list of sessions shows for ``title``: itself, or :data:`UNTITLED`."""
    return title or UNTITLED


def fork_title(typed: str, source: str) -> str:
    """A fork's title: what the user typed (as a title is made from a prompt), else
    "fork of" the source's title; cut to :data:`MAX_TITLE_CHARS` as every title is."""
    return title_from_user_message(typed) or title_from_user_message(
        f"fork of {shown_title(source)}"
    )
