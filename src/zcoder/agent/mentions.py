"""``@path`` in text: a prompt's attachments (zcoder.agent.attachments) and an instruction
file's imports (zcoder.agent.instructions, Claude Code's ``@path`` syntax) are found the
same way.

An ``@`` starts a mention only at the start of the text or after a space or an opening
bracket or quote: ``me@example.com`` and ``a@b`` are words, not mentions. Nothing inside a
code span (```` ``` ```` fences or `` `inline` ``) is a mention, so a pasted decorator
(``@dataclass`` in a fence) or an editor's embedded file stays text. The path runs to the
next space; ``@"a path with spaces"`` is quoted (as Tab writes it; single quotes too). A
sentence's closing punctuation after the path (``see @app.py.``) is offered as a second
reading, without it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

_MENTION: Final = re.compile(r"""(?<![^\s(\[{<"'])@(?:"([^"\n]+)"|'([^'\n]+)'|([^\s`"'<>@]+))""")
_CODE: Final = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
_TRAILING: Final = ".,;:!?)]}'\""


@dataclass(frozen=True)
class Mention:
    """One ``@path``: where it is in the text, and the paths it may mean, likeliest first."""

    start: int
    end: int
    paths: tuple[str, ...]

    @property
    def typed(self) -> str:
        return self.paths[0]


def _code_spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _CODE.finditer(text)]


def outside_code(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` in ``text`` that start outside its code spans."""
    spans = _code_spans(text) if "`" in text else []
    for match in pattern.finditer(text):
        if not any(start <= match.start() < end for start, end in spans):
            yield match


def find_mentions(text: str) -> list[Mention]:
    """The ``@path`` mentions of ``text``, in order (see the module's docstring)."""
    found: list[Mention] = []
    for match in outside_code(_MENTION, text):
        quoted, bare = match.group(1) or match.group(2), match.group(3)
        if quoted is not None:
            found.append(Mention(match.start(), match.end(), (quoted,)))
            continue
        stripped = bare.rstrip(_TRAILING)
        if not stripped:
            continue
        paths = (bare,) if stripped == bare else (bare, stripped)
        found.append(Mention(match.start(), match.end(), paths))
    return found
