"""screen_safe: what reaches the terminal from the model, tools and peers."""

from __future__ import annotations

from zcoder.tui.widgets import relay_text, screen_safe, tool_text


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
