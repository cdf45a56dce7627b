from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zcoder.sessions import MAX_TITLE_CHARS, title_from_user_message


def test_first_non_empty_line_is_the_title() -> None:
    assert title_from_user_message("\n  \n  fix the build \nand the tests") == "fix the build"


def test_whitespace_is_collapsed() -> None:
    assert title_from_user_message("fix\t\tthe    build") == "fix the build"


def test_control_characters_count_as_whitespace() -> None:
    assert title_from_user_message("\x1b[31mred\x00text\x07") == "[31mred text"


def test_exactly_42_characters_are_kept_whole() -> None:
    text = "x" * 42
    assert title_from_user_message(text) == text


def test_longer_line_is_cut_to_42_with_the_ellipsis_counted() -> None:
    title = title_from_user_message("a" * 100)
    assert title == "a" * 41 + "…"
    assert len(title) == MAX_TITLE_CHARS


def test_cut_does_not_leave_a_space_before_the_ellipsis() -> None:
    title = title_from_user_message("x" * 40 + " yyyyyyyyyy")
    assert title == "x" * 40 + "…"


def test_text_without_visible_content_gives_no_title() -> None:
    assert title_from_user_message(" \n\t\n\x00") == ""


@given(st.text(st.characters(codec=None, exclude_categories=[])))
def test_any_title_is_one_short_line(text: str) -> None:
    title = title_from_user_message(text)
    assert len(title) <= MAX_TITLE_CHARS
    assert title == title.strip()
    assert len(title.splitlines()) <= 1
    assert "  " not in title
