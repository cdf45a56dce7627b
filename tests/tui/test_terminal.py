"""ZcoderParser fed the bytes real terminals send: in one read, and split into single bytes.

Textual's own parser gets Shift+Enter under xterm's modifyOtherKeys, Alt+Enter and pastes
holding ESC wrong; each test here names what a terminal sends and the events that must
come out, in order. The driver's tmux handling is tested against a private tmux server.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual import constants, events
from textual._xterm_parser import XTermParser
from textual.message import Message

from zcoder.tui.terminal import ZcoderParser, modified_key, paste_text

Event = tuple[str, str | None, str | None]  # ("key", name, character) or ("paste", text, None)


def describe(messages: list[Message]) -> list[Event]:
    found: list[Event] = []
    for message in messages:
        if isinstance(message, events.Key):
            found.append(("key", message.key, message.character))
        elif isinstance(message, events.Paste):
            found.append(("paste", message.text, None))
    return found


def parse(*reads: str, parser: XTermParser | None = None) -> list[Event]:
    """Events from ``reads`` fed one after the other, then ESCDELAY of silence."""
    parser = parser or ZcoderParser()
    messages: list[Message] = []
    for data in reads:
        messages += parser.feed(data)
    time.sleep(constants.ESCAPE_DELAY * 1.5)
    messages += parser.tick()
    return describe(messages)


def both_ways(data: str) -> list[Event]:
    """The events of ``data`` sent in one read; asserts one byte per read gives the same."""
    burst = parse(data)
    assert parse(*data) == burst, "split into single bytes, the events differ"
    return burst


SHIFT_ENTER = ("key", "shift+enter", None)
ALT_ENTER = ("key", "alt+enter", None)
ENTER = ("key", "enter", "\r")


def keys_of(text: str) -> list[Event]:
    return [("key", c, c) for c in text]  # letters only


def test_shift_enter_under_the_kitty_protocol_is_shift_enter() -> None:
    assert both_ways("\x1b[13;2u") == [SHIFT_ENTER]


def test_shift_enter_under_xterm_modify_other_keys_is_shift_enter() -> None:
    # Textual alone makes a bogus "shift+\r" of this.
    assert describe(list(XTermParser().feed("\x1b[27;2;13~"))) != [SHIFT_ENTER]
    assert both_ways("\x1b[27;2;13~") == [SHIFT_ENTER]


def test_escape_cr_and_escape_lf_are_alt_enter() -> None:
    assert both_ways("\x1b\r") == [ALT_ENTER]
    assert both_ways("\x1b\n") == [ALT_ENTER]
    assert both_ways("ab\x1b\rcd") == [*keys_of("ab"), ALT_ENTER, *keys_of("cd")]


def test_a_lone_escape_is_still_escape() -> None:
    assert both_ways("\x1b") == [("key", "escape", "\x1b")]
    # Escape then Alt+Enter, and Escape then an ordinary key after the delay.
    assert both_ways("\x1b\x1b\r") == [("key", "escape", "\x1b"), ALT_ENTER]
    parser = ZcoderParser()
    first = parse("\x1b", parser=parser)
    assert first == [("key", "escape", "\x1b")]
    assert parse("\r", parser=parser) == [ENTER]


def test_other_sequences_pass_through_unchanged() -> None:
    for data in ("\x1b[A", "\x1b[2~", "\x1b[24~", "\x1b[27u", "\x1b[1;5C", "\x1ba", "\x1b[Z"):
        assert both_ways(data) == parse(data, parser=XTermParser()), data
    assert both_ways("\x1b[A") == [("key", "up", None)]
    assert both_ways("\x1ba") == [("key", "alt+a", "a")]
    assert both_ways("\x1b[27u") == [("key", "escape", None)]


def test_enter_ctrl_j_and_backslash_enter_reach_the_app_as_keys() -> None:
    assert both_ways("\r") == [ENTER]
    assert both_ways("\n") == [("key", "ctrl+j", "\n")]
    assert both_ways("a\\\r") == [("key", "a", "a"), ("key", "backslash", "\\"), ENTER]


@pytest.mark.parametrize(
    ("sequence", "key", "character"),
    [
        ("\x1b[27;2;13~", "shift+enter", None),
        ("\x1b[27;3;13~", "alt+enter", None),
        ("\x1b[27;5;13~", "ctrl+enter", None),
        ("\x1b[27;6;13~", "ctrl+shift+enter", None),
        ("\x1b[27;1;13~", "enter", "\r"),
        ("\x1b[27;2;9~", "shift+tab", None),
        ("\x1b[27;5;9~", "ctrl+tab", None),
        ("\x1b[27;5;127~", "ctrl+backspace", None),
        ("\x1b[27;3;127~", "alt+backspace", None),
        ("\x1b[27;2;27~", "shift+escape", None),
        ("\x1b[27;5;106~", "ctrl+j", None),
        ("\x1b[27;2;97~", "A", "A"),  # tmux: Shift+a as code 97
        ("\x1b[27;2;65~", "A", "A"),
        ("\x1b[27;2;33~", "exclamation_mark", "!"),
        ("\x1b[27;6;97~", "ctrl+shift+a", None),
        ("\x1b[27;3;120~", "alt+x", None),
        ("\x1b[27;2;233~", "É", "É"),
        ("\x1b[27;1;233~", "é", "é"),
    ],
)
def test_modify_other_keys_become_the_key_with_its_modifiers(
    sequence: str, key: str, character: str | None
) -> None:
    assert both_ways(sequence) == [("key", key, character)]


def test_modify_other_keys_that_name_no_character_go_to_textual() -> None:
    assert modified_key(2, 0) is None
    assert modified_key(2, 0xD800) is None
    assert modified_key(5, 7) is None  # a control character that is no key


def test_a_bracketed_paste_holding_escape_cr_and_crlf_is_one_paste() -> None:
    text = "before\x1b[31mred\x1b[0m\r\nline two\rthree\x1b\x1b[A\x1bend"
    assert both_ways(f"\x1b[200~{text}\x1b[201~") == [("paste", text, None)]


def test_a_paste_never_becomes_keys_and_keys_after_it_stay_keys() -> None:
    got = both_ways("x\x1b[200~a\rb\x1b\rc\x1b[201~\ry")
    assert got == [("key", "x", "x"), ("paste", "a\rb\x1b\rc", None), ENTER, ("key", "y", "y")]


def test_the_end_marker_split_across_reads_ends_the_paste() -> None:
    marker = "\x1b[201~"
    for cut in range(len(marker) + 1):
        reads = ("\x1b[200~abc" + marker[:cut], marker[cut:] + "\r")
        assert parse(*reads) == [("paste", "abc", None), ENTER], cut
    # A prefix of the marker inside the paste is text, not the end.
    assert both_ways("\x1b[200~a\x1b[20b\x1b[201c\x1b[201~") == [
        ("paste", "a\x1b[20b\x1b[201c", None)
    ]


def test_the_start_marker_split_across_reads_starts_a_paste() -> None:
    marker = "\x1b[200~"
    for cut in range(1, len(marker)):
        reads = ("q" + marker[:cut], marker[cut:] + "a\rb\x1b[201~")
        assert parse(*reads) == [("key", "q", "q"), ("paste", "a\rb", None)], cut


def test_a_paste_waits_for_its_end_however_long() -> None:
    parser = ZcoderParser()
    assert parse("\x1b[200~line\r", parser=parser) == []
    time.sleep(constants.ESCAPE_DELAY * 3)
    assert describe(list(parser.tick())) == []
    assert parse("more\x1b", "[201~", parser=parser) == [("paste", "line\rmore", None)]


def test_a_one_megabyte_paste_arrives_whole() -> None:
    line = "0123456789abcdef\x1b[1mbold\x1b[0m\r\n"
    text = line * (1_000_000 // len(line) + 1)
    data = f"\x1b[200~{text}\x1b[201~\r"
    chunks = [data[i : i + 4096] for i in range(0, len(data), 4096)]
    assert parse(*chunks) == [("paste", text, None), ENTER]


def test_an_unfinished_paste_at_end_of_input_is_still_delivered() -> None:
    parser = ZcoderParser()
    messages = list(parser.feed("\x1b[200~half a paste\x1b[20"))
    messages += parser.feed("")
    assert describe(messages) == [("paste", "half a paste\x1b[20", None)]


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from([*"ab\\ \t\r\n\x1b[]~;0123456789u", "é", "\x7f"]),
        max_size=60,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=6),
)
def test_any_paste_arrives_whole_however_it_is_split(text: str, cuts: list[int]) -> None:
    text = text.replace("\x1b[201~", "")  # a terminal never sends the end marker inside
    data = f"\x1b[200~{text}\x1b[201~"
    points = sorted({min(cut, len(data)) for cut in cuts})
    reads = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    parser = ZcoderParser()
    messages: list[Message] = []
    for read in reads:
        if read:
            messages += parser.feed(read)
    messages += parser.tick()
    assert describe(messages) == [("paste", text, None)]


def test_paste_text_makes_line_breaks_lf_and_controls_visible() -> None:
    assert paste_text("a\r\nb\rc\nd") == "a\nb\nc\nd"
    assert paste_text("\x1b[31mred\x1b[0m") == "\\e[31mred\\e[0m"
    assert paste_text("bell\x07 nul\x00 tab\tend\x9b") == "bell\\x07 nul\\x00 tab\tend\\x9b"
    assert paste_text("zero\u200bwidth") == "zero\\u200bwidth"
    assert paste_text(paste_text("x\x1b]2;t\x07\r\n")) == paste_text("x\x1b]2;t\x07\r\n")


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.sampled_from([*"ab[;0123579~uAZ\x1bO", "\x7f"]), min_size=1, max_size=24)
)
def test_everything_else_is_read_as_textual_reads_it(data: str) -> None:
    # Only the sequences handled here may differ: ESC CR, ESC LF, CSI 27;m;c~, pastes.
    ours = ("\x1b\r", "\x1b\n", "\x1b[27;", "\x1b[200~")
    if any(sequence in data for sequence in ours):
        return

    def until_end(parser: XTermParser) -> list[Event]:
        return describe([*parser.feed(data), *parser.feed("")])  # "" ends the input

    assert until_end(ZcoderParser()) == until_end(XTermParser())
