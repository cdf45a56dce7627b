"""A streamed reply shown only as far as recovery cannot take it back.

``--prompt`` writes the reply to stdout as it streams and cannot unwrite it, yet
zcoder.model.recovery may still turn the end of the reply into a tool call or move its
start to reasoning. ``settled_length`` and ``HeldReply`` hold back exactly what recovery
might still take; they share the openers recovery looks for (recovery_shapes).
"""

from __future__ import annotations

import re
from typing import Final

from zcoder.model.recovery_scan import _Finder, _Scanner
from zcoder.model.recovery_shapes import (
    _DEEPSEEK_BEGIN,
    _FENCE_LANGUAGES,
    _JSON_START,
    _OPENERS,
    _PYTHONIC_START,
)

# -- while a reply streams ------------------------------------------------------------

_TAG_OPENERS: Final = (
    "<tool_call>",
    "<|tool_call|>",
    "<function=",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|python_start|>",
    _DEEPSEEK_BEGIN,
)
_LINE_OPENERS: Final = ("```", "~~~", "Action:")
_LONGEST_TAG: Final = max(len(tag) for tag in _TAG_OPENERS)


def settled_length(content: str) -> int:
    """How much of a reply's content, as streamed so far, stays the reply whatever
    follows: the text before anything :func:`recover` might still take out of it (a tool
    call, reasoning), without trailing blank lines. A front end that cannot take back what it
    showed (``--prompt``'s stdout) shows only this much until the reply is final.

    Held back: everything while the content may be reasoning (``<think>`` at the start);
    from the first opener of a call shape on (a fence tagged json, tool_call, xml or
    nothing; a call tag; a line starting with JSON or a pythonic call list) to the end;
    and a last line that may still become one. A fence in another language, and prose,
    are never held.
    """
    return _settled(content, 0)[0]


def _settled(content: str, start: int) -> tuple[int, int]:
    """``settled_length``, judging openers from ``start`` on (what lies before it was
    judged not to be a call by an earlier call), and where the next call may start."""
    head = content[:256].lstrip()
    if not head or head.startswith("<think>") or "<think>".startswith(head):
        return 0, 0
    shapes = _Scanner({})  # call shapes only: which tools are offered is not known here
    finder = _Finder(content)
    position = start
    while True:
        match = _OPENERS.search(content, position)
        if match is None:
            break
        if match.group("tag") is not None:
            return _before_blanks(content, match.start()), match.start()
        if match.group("fence") is not None:
            closing = finder.fence_end(match.group("tick"), match.end())
            if closing is None:
                if match.group("lang").lower() in _FENCE_LANGUAGES:
                    return _before_blanks(content, match.start()), match.start()
                # Inside a code block: never a call, whatever comes before its end.
                return _before_blanks(content, len(content)), match.start()
            if not isinstance(shapes._fenced(content, finder, match, 0), int):
                return _before_blanks(content, match.start()), match.start()
            position = closing[1]
            continue
        found = shapes._bare(content, match.end() - 1, match.start())
        if isinstance(found, int):
            position = max(found, match.end())  # JSON that is data, not a call
            continue
        rest = content[match.end() - 1 :]
        if found is not None or _JSON_START.match(rest) or _PYTHONIC_START.match(rest):
            return _before_blanks(content, match.start()), match.start()
        if _undecided_bracket(rest):
            return _before_blanks(content, match.start()), match.start()
        position = match.end()
    # Where the next look starts: no opener before it is left unjudged. A tag may still
    # complete at the tail, and the last line may still start a fence or JSON.
    line_start = content.rfind("\n") + 1
    tail = max(0, len(content) - _LONGEST_TAG)
    if _line_may_open(content[line_start:]):
        tail = min(tail, line_start)
    return _before_blanks(content, _unfinished_opener(content)), max(position, tail)


def _undecided_bracket(rest: str) -> bool:
    """A line-starting ``[`` or ``{`` whose following text cannot yet tell JSON or a call
    list from prose (only blanks, or a name not yet followed by anything else)."""
    body = rest[1:].lstrip()
    if not body:
        return True
    return rest[0] == "[" and re.fullmatch(r"[A-Za-z_]\w*", body) is not None


def _line_may_open(line: str) -> bool:
    """Whether an unfinished last line is, or may still become, a line-start opener."""
    line = line.lstrip(" \t")
    return (
        not line
        or line[0] in "[{"
        or any(opener.startswith(line) or line.startswith(opener) for opener in _LINE_OPENERS)
    )


def _unfinished_opener(content: str) -> int:
    """Where an opener may be starting at the end of ``content`` (else its length)."""
    line_start = content.rfind("\n") + 1
    if content[line_start:].strip(" \t") and _line_may_open(content[line_start:]):
        return line_start
    tail_from = max(line_start, len(content) - _LONGEST_TAG)
    for index in range(tail_from, len(content)):
        if content[index] in "<[" and any(tag.startswith(content[index:]) for tag in _TAG_OPENERS):
            return index
    return len(content)


def _before_blanks(content: str, end: int) -> int:
    """``end`` moved back over the blank lines before it (recovery trims them away from a
    call); blanks at the end of a line that goes on are kept."""
    start = end
    while start > 0 and content[start - 1].isspace():
        start -= 1
    return start if "\n" in content[start:end] else end


class HeldReply:
    """A streamed reply shown only as far as it is settled (:func:`settled_length`).

    ``feed`` takes each piece of content and returns the text that may be shown now;
    ``finish`` takes the final text of the reply (after :func:`recover`) and returns what
    is left to show of it. The final text is matched to what was shown up to blanks
    (recovery trims the text around a call); when it does not begin with what was shown
    (reasoning without an opening tag, found only at its end), it is returned whole.
    """

    def __init__(self) -> None:
        self.content = ""
        self.shown = ""
        self._resume = 0  # where the next look for an opener starts (the work stays linear)

    def feed(self, piece: str) -> str:
        self.content += piece
        settled, self._resume = _settled(self.content, self._resume)
        if settled <= len(self.shown):
            return ""
        fresh = self.content[len(self.shown) : settled]
        self.shown = self.content[:settled]
        return fresh

    def finish(self, final: str) -> str:
        shown, self.content, self.shown, self._resume = self.shown, "", "", 0
        if final.startswith(shown):
            return final[len(shown) :]
        matched = 0
        for char in shown:
            if char.isspace():
                continue
            while matched < len(final) and final[matched].isspace():
                matched += 1
            if matched >= len(final) or final[matched] != char:
                return final
            matched += 1
        return final[matched:]
