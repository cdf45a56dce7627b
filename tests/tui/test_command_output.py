"""CommandOutput: a command's output as the screen keeps it, however it arrives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zcoder.tui.state.command_output import CommandOutput, as_printed

LINES = st.lists(st.text(alphabet="ab\r é", max_size=6), max_size=40)


def fed(text: str, cuts: list[int], limit: int = 1_000_000) -> CommandOutput:
    output = CommandOutput(limit)
    points = sorted({c % (len(text) + 1) for c in cuts})
    for start, end in zip([0, *points], [*points, len(text)], strict=True):
        output.feed(text[start:end])
    return output


@given(LINES, st.booleans(), st.lists(st.integers(min_value=0), max_size=10), st.integers(1, 15))
def test_the_tail_is_the_last_lines_whatever_the_pieces(lines, final_newline, cuts, count):
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    output = fed(text, cuts)
    assert output.text() == text
    whole = text.removesuffix("\n").split("\n") if text else []
    shown, earlier = output.tail(count)
    assert shown == [as_printed(line) for line in whole[-count:]]
    assert earlier == len(whole) - len(shown) == output.lines - len(shown)


@given(st.text(alphabet="xy\n", max_size=300), st.lists(st.integers(min_value=0), max_size=20))
def test_a_bounded_output_keeps_its_head_and_tail(text, cuts):
    output = fed(text, cuts, limit=40)
    kept = output.text()
    if len(text) <= 40:
        assert kept == text
    else:
        assert kept.startswith(text[:20])
        assert kept.endswith(text[-20:])
        assert f"{len(text) - 40:,} characters not kept here" in kept
    assert output.total == len(text)
    assert output.newlines == text.count("\n")


def test_the_tail_of_a_cut_output_comes_from_its_end():
    output = CommandOutput(100)
    for n in range(1, 1001):
        output.feed(f"{n}\n")
    shown, earlier = output.tail(3)
    assert shown == ["998", "999", "1000"]
    assert earlier == 997


def test_a_carriage_return_starts_the_line_over_as_on_a_terminal():
    assert as_printed("10%\r50%\r100%") == "100%"
    assert as_printed("done\r") == "done"
    output = CommandOutput()
    output.feed("progress 10%\rprogress 1")
    output.feed("00%\r\nnext\n")
    assert output.tail(5) == (["progress 100%", "next"], 0)


def test_a_partial_last_line_counts_and_shows():
    output = CommandOutput()
    output.feed("one\ntw")
    assert output.lines == 2
    assert output.tail(1) == (["tw"], 1)
    output.feed("o\n")
    assert output.lines == 2
    assert output.tail(5) == (["one", "two"], 0)
