"""Output bounds: head and tail with a marker saying how much was left out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zcoder.tools.output import (
    DEFAULT_MAX_TOOL_OUTPUT,
    HeadTailBuffer,
    bound_text,
    max_tool_output_from_env,
)


def test_short_text_is_unchanged() -> None:
    assert bound_text("hello", 100) == "hello"


def test_long_text_keeps_head_and_tail() -> None:
    text = "HEAD" + "x" * 10000 + "TAIL"
    bounded = bound_text(text, 1024)
    assert bounded.startswith("HEAD") and bounded.endswith("TAIL")
    assert "bytes omitted" in bounded
    assert len(bounded.encode()) <= 1024


@given(st.text(), st.integers(min_value=64, max_value=4096))
def test_bound_is_respected_for_any_text(text: str, limit: int) -> None:
    bounded = bound_text(text, limit)
    if len(text.encode()) <= limit:
        assert bounded == text
    else:
        assert len(bounded.encode()) <= limit
        assert "bytes omitted" in bounded


def test_head_tail_buffer_streams() -> None:
    buffer = HeadTailBuffer(100)
    buffer.feed(b"A" * 10)
    for _ in range(1000):
        buffer.feed(b"m" * 100)
    buffer.feed(b"Z" * 10)
    text = buffer.text()
    assert text.startswith("A" * 10) and text.endswith("Z" * 10)
    assert f"{buffer.total - 100} bytes omitted" in text


def test_head_tail_buffer_small_output_is_whole() -> None:
    buffer = HeadTailBuffer(100)
    buffer.feed(b"abc")
    buffer.feed(b"def")
    assert buffer.text() == "abcdef"


def test_max_output_from_env() -> None:
    assert max_tool_output_from_env({}) == DEFAULT_MAX_TOOL_OUTPUT
    assert max_tool_output_from_env({"ZCODER_MAX_TOOL_OUTPUT": "65536"}) == 65536
    assert max_tool_output_from_env({"ZCODER_MAX_TOOL_OUTPUT": "junk"}) == DEFAULT_MAX_TOOL_OUTPUT
    assert max_tool_output_from_env({"ZCODER_MAX_TOOL_OUTPUT": "-5"}) == DEFAULT_MAX_TOOL_OUTPUT
    assert max_tool_output_from_env({"ZCODER_MAX_TOOL_OUTPUT": "10"}) == 1024
