"""A custom command's prompt with the typed arguments filled in, as Claude Code fills them.

``$ARGUMENTS`` is everything typed after the command's name; ``$1``, ``$2``… are its words
(split as a shell would, quotes grouping words; unbalanced quotes split at blanks); a
number past the last word is empty. A body with neither gets the arguments appended on a
line ``ARGUMENTS: …`` (Claude Code does the same), so typed words are never lost silently.

One pass, left to right: an argument that itself contains ``$1`` or ``$ARGUMENTS`` is put
in as typed, never expanded again.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

PLACEHOLDER: Final = re.compile(r"\$ARGUMENTS|\$([1-9][0-9]*)")


def split_arguments(arguments: str) -> list[str]:
    """The words of ``arguments``, shell-like; at blanks when its quotes do not balance."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def expand(body: str, arguments: str) -> str:
    """``body`` with ``$ARGUMENTS`` and ``$N`` replaced by what was typed."""
    arguments = arguments.strip()
    if PLACEHOLDER.search(body) is None:
        return f"{body}\n\nARGUMENTS: {arguments}" if arguments else body
    words = split_arguments(arguments)

    def fill(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return arguments
        index = int(match.group(1)) - 1
        return words[index] if index < len(words) else ""

    return PLACEHOLDER.sub(fill, body)
