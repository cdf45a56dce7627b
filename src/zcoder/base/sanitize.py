"""Peer- and model-supplied text made safe to show and to give to a model: one table.

Two facts live here, each once:

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

* **Text bound for a terminal** outside the TUI too (a CLI command's listing, ``--prompt``'s
  reply on a terminal, a question asked on /dev/tty) goes through ``screen_safe`` (several
  lines) or ``visible`` (one field); ``for_stream`` is ``screen_safe`` on a terminal and the
  exact text to a pipe or a file; ``json_text`` is JSON that carries none of these
  characters raw (each a ``\\uXXXX`` escape, the same value once parsed).

* **Chat-template control tokens** of the model families Ollama serves are *defused* in
  text a peer supplied before it enters a model's context: the token's first character is
  replaced (``<`` by ``‹`` U+2039, ``[`` by ``［`` U+FF3B), which keeps the text readable
  but no longer the token string. Invisible characters and controls are escaped first, so
  neither can hide a token; defusing is idempotent. Tokens are matched by class, not by a
  list: any ``<|…|>`` or ``<｜…｜>``, any tag named like turn, reasoning or tool-call
  structure, with a namespace too (``<minimax:tool_call>``, ``<seed:think>``), any tag
  with ``function`` or ``tool_`` in its name (``<start_function_call>``,
  ``<function_calls>``), ``<invoke …>`` and ``<parameter …>``, and Mistral's bracket
  tokens. ``TOOL_CALL_OPENERS`` is the one list of how a tool call written as text begins:
  zcoder.model.recovery reads calls from those openers, and each of them is defused here.

Nothing here imports the agent, the UI or the model client.
"""

from __future__ import annotations

import json
import re
from typing import IO, Any, Final

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
# Text for a model: as on a screen. Line feed and tab are kept; any other control (ESC,
# BEL, CR, C1) is written as its escape, which says as much about an escape sequence
# without passing one into the model's record (and from there to a terminal or a log).
UNSAFE_FOR_MODEL: Final = UNSAFE_ON_SCREEN
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
    """Text for a model: controls other than line feed and tab, invisible characters and
    lone surrogates become escapes (as ``visible_lines``)."""
    return _made_visible(text, UNSAFE_FOR_MODEL, _ASCII_ON_SCREEN)


def screen_safe(text: str) -> str:
    """Text of several lines bound for a terminal: CRLF read as a line feed, then
    ``visible_lines`` (line feeds and tabs kept; every other control, so every ESC
    sequence, and every invisible or bidi character shown as its escape). The TUI, every
    CLI command and ``--prompt`` show text from a file, a server, a peer or a model this way."""
    return visible_lines(text.replace("\r\n", "\n"))


def is_terminal(stream: IO[str]) -> bool:
    """Whether ``stream`` is a terminal (False for anything that cannot say)."""
    try:
        return stream.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def for_stream(text: str, stream: IO[str]) -> str:
    """``text`` as it may be written to ``stream``: ``screen_safe`` on a terminal, where a
    control sequence would act; the exact text to a pipe or a file, which want the data."""
    return screen_safe(text) if is_terminal(stream) else text


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells a character past the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON for a terminal or a script: other characters as themselves, but no
    control, invisible or bidi character raw (and no lone surrogate, which UTF-8 cannot
    carry): each is a ``\\uXXXX`` escape, so the value is exactly the same once parsed.
    ``json.dumps`` escapes C0 controls in strings already, and outside strings JSON holds
    only ASCII punctuation and the indent's line feeds, which are kept."""
    return UNSAFE_ON_SCREEN.sub(_json_escape, json.dumps(value, ensure_ascii=False, indent=indent))


# -- chat-template control tokens -------------------------------------------------------

# How a tool call written as text begins, by model family: the openers
# zcoder.model.recovery reads calls from. Each is a control token defused below (a test
# holds both to this one list).
TOOL_CALL_OPENERS: Final = (
    "<tool_call>",  # Hermes, Qwen2.5, Qwen3, GLM-4.5 (and Qwen3-Coder's XML inside it)
    "<|tool_call|>",  # Granite 3.0, Phi-4-mini
    "<function=",  # Qwen3-Coder's XML, Llama 3.1's custom tools
    "[TOOL_CALLS]",  # Mistral
    "<|python_tag|>",  # Llama 3.1 to 3.3
    "<|python_start|>",  # Llama 4
    "<\uff5ctool\u2581calls\u2581begin\uff5c>",  # DeepSeek V3, R1, V3.1
)

# Angle-bracket tags that chat templates use as turn, tool or reasoning structure; matched
# with an optional slash, an optional namespace (`<minimax:tool_call>`, `<seed:think>`),
# whitespace, any case and (for `<function=x>`, `<invoke name="x">`) attributes; a name
# and `=` is enough (`<function=` opens a call whatever follows). Tool-call
# structure is matched by class: any name with `tool_` in it (tool_call, tool_calls_begin,
# start_tool_response) or `function` as a word of it (function_calls, start_function_call).
_TAG_NAMES: Final = (
    "s|bos|eos|pad|unk|sop|eop|start_of_turn|end_of_turn|start_of_image|end_of_image"
    "|think|thinking|reasoning|tools|(?:\\w{1,40}_)?tool_\\w{1,40}"
    "|(?:\\w{1,40}_)?function(?:_\\w{1,40})?|invoke|parameter|arg_key|arg_value"
    "|fim_\\w+|file_sep|repo_name|\\w+_token"
)
_NAMESPACE: Final = "(?:[\\w.-]{1,32}:)?"
# Mistral-style bracket tokens (Llama 2 [INST], Mistral v3+ tools and prompts, GLM masks).
_BRACKET_NAMES: Final = (
    "INST|SYSTEM_PROMPT|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS|TOOL_CONTENT|THINK|CALL_ID"
    "|gMASK|sMASK"
)
_BAR: Final = "[|\uff5c]"  # ASCII bar (ChatML, Llama 3, Phi, Granite...) or full width (DeepSeek)

# Each alternative matches only a token's first character and looks ahead for the rest, so
# overlapping tokens are all found in one pass. No lookahead requires a `<` or `[` beyond
# that first character except <<SYS>>'s second `<`, so replacing them cannot make another
# token appear: a second pass changes nothing. Quantifiers are possessive (`*+`): a long
# run of spaces after a `<` is read once, not retried position by position.
CONTROL_TOKEN: Final = re.compile(
    rf"""
    <(?=\s*+{_BAR}\s*+[^\s|\uff5c]{{1,100}}+\s*+{_BAR}\s*+>)  # <|im_start|>, <｜User｜>
    | <(?=<\s*+/?\s*+SYS\s*+>>)                                  # <<SYS>>, <</SYS>>
    | <(?=\s*+/?\s*+{_NAMESPACE}(?:{_TAG_NAMES})(?:\s*+/?\s*+>|=|\s[^>\n]{{0,200}}+>))
    | \[(?=\s*+/?\s*+(?:{_BRACKET_NAMES})\s*+\])                 # [INST], [/TOOL_RESULTS]
    """,
    re.IGNORECASE | re.VERBOSE,
)
_DEFUSED: Final = {"<": "\u2039", "[": "\uff3b"}


def defuse_tokens(text: str) -> str:
    """The text with every chat-template control token broken (its first character swapped)."""
    return CONTROL_TOKEN.sub(lambda match: _DEFUSED[match.group()], text)


def body_for_model(text: str) -> str:
    """Several lines from a peer, for a model: invisible characters escaped, tokens defused."""
    return defuse_tokens(reveal_invisible(text))


def field_for_model(text: str) -> str:
    """One line from a peer, for a model: controls and invisibles escaped, tokens defused."""
    return defuse_tokens(visible(text))


ELLIPSIS: Final = "…"


def bounded(text: str, limit: int, *, keep_end: bool = False) -> str:
    """At most ``limit`` characters; a cut is marked with ``…`` (at the start with keep_end)."""
    if len(text) <= limit:
        return text
    if keep_end:
        return ELLIPSIS + text[len(text) - limit + 1 :]
    return text[: limit - 1] + ELLIPSIS
