"""While a reply streams, text that may still become a tool call or reasoning is held
back; the rest is shown at once (issue 18 item 20). ``--prompt`` writes to stdout, which
cannot take text back as the TUI takes its entry back, so it shows only settled text.

The real-shaped outputs of tests/fixtures/model_outputs are streamed in pieces of every
size: nothing of a call ever shows, and what shows in the end is the recovered reply."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.model.test_recovery import CASES, SCHEMAS, _reply
from zcoder.model.recovery import HeldReply, recover, settled_length


def squeezed(text: str) -> str:
    return "".join(text.split())


def stream(content: str, sizes: list[int]) -> tuple[str, HeldReply]:
    """``content`` fed in pieces of ``sizes`` (cycled); what was shown while it streamed."""
    held, shown, position, turn = HeldReply(), "", 0, 0
    while position < len(content):
        size = sizes[turn % len(sizes)] if sizes else 1
        shown += held.feed(content[position : position + size])
        position, turn = position + size, turn + 1
    return shown, held


def _orphan_reasoning(case: dict[str, Any]) -> bool:
    """Reasoning with no opening tag is known to be reasoning only at its </think>."""
    content = case["content"]
    return "</think>" in content and "<think>" not in content


@pytest.mark.parametrize("case", CASES)
@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=6))
def test_no_call_text_reaches_the_screen_while_it_streams(
    case: dict[str, Any], sizes: list[int]
) -> None:
    if _orphan_reasoning(case):
        pytest.skip("reasoning without an opening tag shows as it streams (not held)")
    final = recover(_reply(case), SCHEMAS).content
    shown, held = stream(case["content"], sizes)
    assert squeezed(final).startswith(squeezed(shown)), "something shown was taken out"
    rest = held.finish(final)
    assert squeezed(shown + rest) == squeezed(final)


def test_a_bare_json_call_is_held_and_the_prose_before_it_shown() -> None:
    content = 'Let me read it.\n\n{"name": "read_file", "arguments": {"path": "a.py"}}\n'
    shown, held = stream(content, [3])
    assert shown == "Let me read it."
    assert held.finish("Let me read it.") == ""


def test_prose_and_code_blocks_in_other_languages_stream_at_once() -> None:
    content = "Run this:\n\n```bash\nls -la\n{ echo; }\n```\n\nThen [see the docs](x).\n"
    for cut in range(1, len(content)):
        settled = settled_length(content[:cut])
        # Only blanks and the start of a line that may open a fence are ever held.
        assert len(content[settled:cut].strip()) <= len("```bash")
    assert settled_length(content) == len(content.rstrip())


def test_a_json_block_that_is_data_shows_once_it_is_closed() -> None:
    content = 'The config:\n\n```json\n{"port": 8080}\n```\n\nThat is all.'
    assert settled_length(content[: content.index("8080")]) == len("The config:")
    assert settled_length(content) == len(content)


def test_reasoning_at_the_start_is_held_until_the_reply_is_final() -> None:
    shown, held = stream("<think>\nthe user wants x\n</think>\n\nHere is x.", [2])
    assert shown == ""
    assert held.finish("Here is x.") == "Here is x."


def test_a_tag_split_across_pieces_is_never_shown_in_part() -> None:
    shown, _held = stream('Reading.\n<tool_call>{"name": "read_file"}</tool_call>', [1])
    assert shown == "Reading."
    assert "<" not in shown
