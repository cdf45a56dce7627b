"""Finding the spans of a reply's text that may be calls (zcoder.model.recovery).

The scanner walks the text from opener to opener (a fence, a call tag, a line that starts
with JSON or a pythonic list), bounded by the attempts and depth limits of
zcoder.model.recovery_shapes, and hands each block to the reader of its shape there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from zcoder.model.recovery_shapes import (
    _DEEPSEEK_BEGIN,
    _DEEPSEEK_END,
    _FENCE_LANGUAGES,
    _JSON_START,
    _MAX_ATTEMPTS,
    _MAX_DEPTH,
    _MAX_PYTHONIC_CHARS,
    _MAX_PYTHONIC_LINES,
    _OPENERS,
    _PYTHONIC_START,
    _calls_from_json,
    _deepseek,
    _glm,
    _json_run,
    _mistral,
    _python_tag,
    _pythonic,
    _Span,
    _Tools,
    _WrittenCall,
    _xml_functions,
)

# -- finding spans ------------------------------------------------------------------------


class _Scanner:
    """Finds the spans of a text that read as calls, with bounded work.

    Every opener is tried once; a tagged body ends at its closing tag or at the next
    opener of its kind, so bodies do not overlap; a missing closing tag is searched for
    once; JSON is read from small windows first. What a span means is judged later.
    """

    def __init__(self, tools: _Tools) -> None:
        self.tools = tools
        self.attempts = 0

    def scan(self, text: str, depth: int) -> list[_Span]:
        """Every span of ``text`` that reads as calls, in order; none overlaps another."""
        finder = _Finder(text)
        spans: list[_Span] = []
        position = 0
        while position < len(text):
            match = _OPENERS.search(text, position)
            if match is None:
                break
            result: _Span | int | None
            if match.group("fence") is not None:
                result = self._fenced(text, finder, match, depth)
            elif match.group("tag") is not None:
                result = self._tagged(text, finder, match, depth)
            else:
                result = self._bare(text, match.end() - 1, match.start())
            if isinstance(result, _Span):
                spans.append(result)
                position = result.end
            elif isinstance(result, int):
                position = max(result, match.start() + 1)  # text to step over, never read
            else:
                position = match.start() + 1
        return spans

    def _fenced(self, text: str, finder: _Finder, match: re.Match[str], depth: int) -> _Span | int:
        tick = match.group("tick")
        closing = finder.fence_end(tick, match.end())
        body_end, end = closing if closing is not None else (len(text), len(text))
        if match.group("lang").lower() not in _FENCE_LANGUAGES:
            return end
        body = text[match.end() : body_end]
        calls = self.block_calls(body, depth + 1, glm=False)
        if calls is None and match.group("lang").lower() == "tool_code":
            calls = _pythonic(body.strip(), allow_single=True)
        if calls is None:
            return end
        return _Span(match.start(), end, tuple(calls))

    def _tagged(
        self, text: str, finder: _Finder, match: re.Match[str], depth: int
    ) -> _Span | int | None:
        tag = match.group("tag")
        start, after = match.start(), match.end()
        calls: list[_WrittenCall] | None
        if tag in ("<tool_call>", "<|tool_call|>"):
            close = "</tool_call>" if tag == "<tool_call>" else "<|/tool_call|>"
            body_end, end = finder.until(after, (close,), tag)
            glm = tag == "<tool_call>"
            calls = self.block_calls(text[after:body_end], depth + 1, glm=glm)
        elif tag == "<function=":
            body_end, end = finder.until(after, ("</function>",), tag)
            calls = _xml_functions(text[start:end], self.tools)
        elif tag == "[TOOL_CALLS]":
            # Not calls: only the marker is stepped over, so what follows it (a fenced
            # call, say) is still read. Every marker before the bad piece would take that
            # piece in too, so none of them is tried again (work stays linear).
            if start < finder.mistral_bad_until:
                return after
            found = _mistral(text, start)
            if isinstance(found, int):
                finder.mistral_bad_until = found
                return after
            calls, end = found, len(text)
        elif tag == "<|python_tag|>":
            body_end, end = finder.until(after, ("<|eom_id|>", "<|eot_id|>"), tag)
            calls = _python_tag(text[after:body_end])
        elif tag == "<|python_start|>":
            body_end, end = finder.until(after, ("<|python_end|>",), tag)
            calls = _pythonic(text[after:body_end].strip(), allow_single=True)
        else:
            body_end, end = finder.until(after, (_DEEPSEEK_END,), _DEEPSEEK_BEGIN)
            calls = _deepseek(text[after:body_end])
        return _Span(start, end, tuple(calls)) if calls else None

    def _bare(self, text: str, brace: int, line_start: int) -> _Span | int | None:
        """JSON (or a pythonic list) that starts a line and ends one."""
        if self.attempts >= _MAX_ATTEMPTS:
            return None
        if _JSON_START.match(text, brace):
            self.attempts += 1
            decoded = _json_run(text, brace)
            if decoded is not None:
                values, end = decoded
                calls = _calls_from_json(values) if _rest_of_line_blank(text, end) else None
                # JSON that is not calls is data: stepped over whole, never read inside.
                return _Span(line_start, end, tuple(calls)) if calls else end
        if _PYTHONIC_START.match(text, brace):
            self.attempts += 1
            return _pythonic_lines(text, brace, line_start)
        return None

    def block_calls(self, body: str, depth: int, *, glm: bool) -> list[_WrittenCall] | None:
        """The calls of a wrapper's or fence's body, when the whole body is calls."""
        if depth > _MAX_DEPTH:
            return None
        stripped = body.strip()
        if not stripped:
            return None
        if stripped.startswith("<function="):
            return _xml_functions(stripped, self.tools)
        if glm and stripped[0] not in "[{<`":
            return _glm(stripped, self.tools)
        calls: list[_WrittenCall] = []
        position = 0
        for span in self.scan(stripped, depth):
            if stripped[position : span.start].strip():
                return None
            calls.extend(span.calls)
            position = span.end
        if not calls or stripped[position:].strip():
            return None
        return calls


class _Finder:
    """``str.find`` over one text, remembering where each string next occurs."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._found: dict[str, tuple[int, int]] = {}  # needle: (searched from, found at)
        # A [TOOL_CALLS] before this offset is known not to start calls.
        self.mistral_bad_until = -1

    def find(self, needle: str, start: int) -> int:
        known = self._found.get(needle)
        if known is not None:
            searched_from, found = known
            # Nothing lies between where that search began and what it found.
            if searched_from <= start and (found < 0 or found >= start):
                return found
        found = self.text.find(needle, start)
        self._found[needle] = (start, found)
        return found

    def until(self, start: int, closers: Sequence[str], opener: str) -> tuple[int, int]:
        """Where a tagged body ends: at the first closer (which the span takes), at the
        next ``opener`` (left for the next span) or at the end of the text."""
        best = (len(self.text), len(self.text))
        for closer in closers:
            found = self.find(closer, start)
            if 0 <= found < best[0]:
                best = (found, found + len(closer))
        found = self.find(opener, start)
        if 0 <= found < best[0]:
            best = (found, found)
        return best

    def fence_end(self, tick: str, start: int) -> tuple[int, int] | None:
        closing = re.compile(
            rf"^[ \t]*{re.escape(tick[0])}{{{len(tick)},}}[ \t]*$", re.MULTILINE
        ).search(self.text, start)
        return (closing.start(), closing.end()) if closing else None


def _rest_of_line_blank(text: str, position: int) -> bool:
    newline = text.find("\n", position)
    return not text[position : newline if newline >= 0 else len(text)].strip()


def _pythonic_lines(text: str, start: int, line_start: int) -> _Span | None:
    position = start
    for _ in range(_MAX_PYTHONIC_LINES):
        newline = text.find("\n", position)
        end = newline if newline >= 0 else len(text)
        if end - start > _MAX_PYTHONIC_CHARS:
            return None
        candidate = text[start:end].rstrip()
        if candidate.endswith("]"):
            calls = _pythonic(candidate, allow_single=False)
            if calls:
                return _Span(line_start, start + len(candidate), tuple(calls))
        if newline < 0:
            return None
        position = newline + 1
    return None
