"""screen_safe: what reaches the terminal from the model, tools and peers."""

from __future__ import annotations

import io
import json
import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures.hostile_text import INVISIBLES
from zcoder.base.sanitize import UNSAFE_ON_SCREEN, for_stream, json_text, visible
from zcoder.tui.widgets.shared import screen_safe
from zcoder.tui.widgets.transcript import relay_text, tool_text


def test_plain_text_is_unchanged() -> None:
    text = "line one\n\tindented — «ünïcode» ✓ 表"
    assert screen_safe(text) is text


def test_controls_are_made_visible_and_lines_kept() -> None:
    assert screen_safe("a\x1b[2Jb") == "a\\e[2Jb"
    assert screen_safe("t\x1b]0;title\x07x") == "t\\e]0;title\\x07x"
    assert screen_safe("c1 \x9b31m") == "c1 \\x9b31m"  # an 8-bit CSI
    assert screen_safe("bidi \u202eevil") == "bidi \\u202eevil"
    assert screen_safe("crlf\r\nnext\rover") == "crlf\nnext\\rover"
    assert screen_safe("nul\x00 del\x7f") == "nul\\x00 del\\x7f"


def test_widget_texts_carry_no_escape_character() -> None:
    relay = relay_text("p", 1, "/w", "1-2", "do \x1b]52;c;Zm9v\x1b\\ this")
    tool = tool_text("run_command", {"command": "x\x9b"}, "completed", "out\x1b[31mred")
    for text in (relay, tool):
        assert "\x1b" not in text.plain and "\x9b" not in text.plain


# -- invisible characters: one table for the screen, peer listings and the model --------

ESCAPE = re.compile(r"\\(?:x([0-9a-f]{2})|u([0-9a-f]{4})|U([0-9a-f]{8})|([nrte]))")
NAMED = {"n": "\n", "r": "\r", "t": "\t", "e": "\x1b"}
# Default_Ignorable_Code_Point ranges that are not format characters (Cf).
IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),
)


def unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        if match.group(4):
            return NAMED[match.group(4)]
        return chr(int(match.group(1) or match.group(2) or match.group(3), 16))

    return ESCAPE.sub(one, text)


def hidden(char: str) -> bool:
    """Whether a reader could not see ``char`` (the test's own oracle)."""
    code = ord(char)
    return unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp") or any(
        low <= code <= high for low, high in IGNORABLE
    )


def assert_nothing_hidden(out: str, *, kept: str = "") -> None:
    for i, char in enumerate(out):
        if char in kept or not hidden(char):
            continue
        # The one exception: an emoji or text presentation selector after a drawn character.
        before = out[i - 1] if i else ""
        assert char in "\ufe0e\ufe0f" and before and not hidden(before), (char, out)
        assert not before.isspace() and before not in "\ufe0e\ufe0f", (char, out)


def test_invisible_characters_are_shown_as_escapes() -> None:
    for char in INVISIBLES:
        shown = screen_safe(f"a{char}b")
        assert char not in shown and unescape(shown) == f"a{char}b"
        assert visible(f"a{char}b") == shown
    assert screen_safe("zero\u200bwidth") == "zero\\u200bwidth"
    assert screen_safe("soft\xadhyphen") == "soft\\xadhyphen"
    assert screen_safe("tag \U000e0041\U000e007f") == "tag \\U000e0041\\U000e007f"
    assert screen_safe("a\u2028b\u2029c") == "a\\u2028b\\u2029c"
    assert screen_safe("family 👨\u200d💻") == "family 👨\\u200d💻"  # security over emoji
    assert screen_safe("hangul \u3164 \uffa0 \u115f\u1160") == (
        "hangul \\u3164 \\uffa0 \\u115f\\u1160"
    )


def test_presentation_selectors_stay_only_after_a_drawn_character() -> None:
    assert screen_safe("warn ⚠️ love ❤️") == "warn ⚠️ love ❤️"
    assert screen_safe("\ufe0fstart") == "\\ufe0fstart"
    assert screen_safe("after space \ufe0f") == "after space \\ufe0f"
    assert screen_safe("❤\ufe0f\ufe0f\ufe0e") == "❤\ufe0f\\ufe0f\\ufe0e"  # a run hides data
    assert screen_safe("x\u200b\ufe0f") == "x\\u200b\\ufe0f"
    assert screen_safe("x\ufe00 y\U000e0100") == "x\\ufe00 y\\U000e0100"


def test_every_format_character_of_this_unicode_is_escaped() -> None:
    chars = [chr(code) for code in range(0x110000) if hidden(chr(code))]
    text = "x".join(chars)
    assert_nothing_hidden(visible(text))
    assert_nothing_hidden(screen_safe(text), kept="\n\t")


def test_pure_ascii_is_returned_as_is() -> None:
    text = "plain ascii text, with punctuation: <|> [x] {y} ~`!@#$%^&*()\n\tend"
    assert screen_safe(text) is text
    assert visible("one line") == "one line"


_any_char = st.one_of(
    st.characters(),
    st.sampled_from(INVISIBLES),
    st.sampled_from(["\ufe0e", "\ufe0f", "\ud800", "\udfff", "\x1b", "\x9b", "\n", "\r", "\t"]),
    st.integers(0xE0000, 0xE0FFF).map(chr),
)
_texts = st.text(_any_char, max_size=40)


@given(_texts)
def test_no_hidden_character_reaches_the_screen(text: str) -> None:
    assert_nothing_hidden(screen_safe(text), kept="\n\t")
    assert_nothing_hidden(visible(text))


@given(st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
def test_printable_ascii_is_unchanged(text: str) -> None:
    assert visible(text) == text
    assert screen_safe(text) == text
    assert screen_safe(text + "\n\t" + text) == text + "\n\t" + text


@given(_texts.filter(lambda t: "\\" not in t))
def test_escapes_keep_the_information(text: str) -> None:
    # Without backslashes in the input, the escapes can be read back: distinct inputs stay
    # distinct, and nothing is lost but the character's invisibility.
    assert unescape(visible(text)) == text
    if "\r\n" not in text:
        assert unescape(screen_safe(text)) == text


# -- outside the TUI: a stream that may be a terminal, and JSON --------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_for_stream_makes_text_visible_only_on_a_terminal() -> None:
    text = "ok\x1b]52;c;Zm9v\x07\u202e\r\n"
    assert for_stream(text, _Terminal()) == "ok\\e]52;c;Zm9v\\x07\\u202e\n"
    assert for_stream(text, io.StringIO()) is text  # a pipe or a file: the exact text


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(JSON_VALUES, st.sampled_from([None, 2]))
def test_json_text_parses_to_the_same_value_and_carries_nothing_raw(value, indent) -> None:
    """Lone surrogates too, which a UTF-8 stream could not even carry raw."""
    text = json_text(value, indent=indent)
    assert json.loads(text) == value
    text.encode("utf-8")
    assert UNSAFE_ON_SCREEN.search(text) is None
