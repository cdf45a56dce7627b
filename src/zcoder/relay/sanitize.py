"""Peer- and model-supplied text made safe to show: one table.

* **Which characters are never shown as themselves**, and how they are written instead.
  Controls (C0, C1), lone surrogates and *invisible* characters become escapes: ``\\n``,
  ``\\r``, ``\\t``, ``\\e``, ``\\xNN`` below U+0100, ``\\uNNNN`` in the BMP, ``\\UNNNNNNNN``
  above it (Python's spelling: ``\\xad``, ``\\u200b``, ``\\U000e0041``). Invisible means: every
  format character (category Cf: zero-width space and joiners, LRM/RLM, bidi embeddings,
  overrides and isolates, word joiner, invisible operators, BOM, soft hyphen, U+180E,
  U+061C...), every Default_Ignorable_Code_Point (combining grapheme joiner, Hangul fillers
  U+115F U+1160 U+3164 U+FFA0, Khmer inherent vowels, Mongolian selectors, the whole
  U+E0000-U+E0FFF block: tag characters and the supplementary variation selectors), the
  line and paragraph separators U+2028 U+2029, and the variation selectors U+FE00-U+FE0F.
  Security wins over emoji: U+200D (ZWJ) and the tag characters of flag sequences are
  escaped too, since both are used to smuggle text past a reader. The one exception is
  U+FE0E/U+FE0F (text/emoji presentation) right after a visible character, so that
  ``⚠️`` stays one symbol; a presentation selector anywhere else (at the start, after a
  space, a control, an invisible character or another selector) is escaped, so a run of
  them cannot carry hidden data. Private-use characters and U+2800 are left alone: they
  are drawn as visible boxes or blanks.

Nothing here imports the agent, the UI or the model client.
"""

from __future__ import annotations

import re
from typing import Final

# -- invisible characters ---------------------------------------------------------------

# Format characters (Cf) and default-ignorable code points, as regex class ranges; the
# presentation selectors U+FE0E and U+FE0F are handled apart (see _PRESENTATION).
INVISIBLE_CLASS: Final = (
    r"\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    r"\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    r"\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb"
    r"\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    r"\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_C0_C1: Final = r"\x00-\x1f\x7f-\x9f"
_SURROGATES: Final = r"\ud800-\udfff"
_PRESENTATION: Final = r"\ufe0e\ufe0f"
# A presentation selector is kept only right after a character that is drawn: not at the
# start of the text, nor after whitespace, a control, an invisible character or a selector.
_STRAY_PRESENTATION: Final = (
    rf"[{_PRESENTATION}](?<![^\s{_C0_C1}{INVISIBLE_CLASS}{_PRESENTATION}][{_PRESENTATION}])"
)


def _unsafe(controls: str) -> re.Pattern[str]:
    return re.compile(rf"[{controls}{_SURROGATES}{INVISIBLE_CLASS}]|{_STRAY_PRESENTATION}")


# One line of text (a name, a path): every control, line breaks included.
UNSAFE_IN_LINE: Final = _unsafe(_C0_C1)
# Text of several lines on a screen: line feed and tab are kept.
UNSAFE_ON_SCREEN: Final = _unsafe(r"\x00-\x08\x0b-\x1f\x7f-\x9f")
# Text for a model: controls are kept (a model is not a terminal; a task may be about an
# escape sequence), invisible characters and lone surrogates are not.
UNSAFE_FOR_MODEL: Final = _unsafe("")
# Pure ASCII text can only hold controls: a cheaper first look for the common case.
_ASCII_IN_LINE: Final = re.compile(r"[\x00-\x1f\x7f]")
_ASCII_ON_SCREEN: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

_NAMED_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}


def escape_char(char: str) -> str:
    """The visible spelling of one character: ``\\n``, ``\\e``, ``\\x07``, ``\\u200b``..."""
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escape(match: re.Match[str]) -> str:
    return escape_char(match.group())


def _made_visible(text: str, pattern: re.Pattern[str], ascii_pattern: re.Pattern[str]) -> str:
    if text.isascii():
        if ascii_pattern.search(text) is None:
            return text
    elif pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def visible(text: str) -> str:
    """One line: controls (line breaks too) and invisible characters become escapes."""
    return _made_visible(text, UNSAFE_IN_LINE, _ASCII_IN_LINE)


def visible_lines(text: str) -> str:
    """Several lines: as ``visible`` but line feeds and tabs are kept."""
    return _made_visible(text, UNSAFE_ON_SCREEN, _ASCII_ON_SCREEN)


def reveal_invisible(text: str) -> str:
    """Text for a model: invisible characters and lone surrogates become escapes."""
    if text.isascii() or UNSAFE_FOR_MODEL.search(text) is None:
        return text
    return UNSAFE_FOR_MODEL.sub(_escape, text)
