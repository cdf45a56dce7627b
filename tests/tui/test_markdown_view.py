"""Assistant replies as markdown: blocks as they stream, and what the markdown may not do."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tests.fixtures.processes import fresh_python_lines
from zcoder.tui.widgets.markdown_view import BlocksView, MarkdownBlocks, top_level_blocks
from zcoder.tui.widgets.shared import screen_safe

REPLY = """# Plan

Here is **what** I found in `hello.py`, with *emphasis*.

| file | lines |
|------|------:|
| hello.py | 1 |

```python
def greet(name: str) -> str:
    return f"hello {name}"
```

1. first step
2. second step

> a quote
lazily continued

Setext heading
--------------

    indented code

- a loose

- list
"""

FRAGMENTS = [
    "# Title\n",
    "Some *emphasis* and **bold** text.\n",
    "\n",
    "\n\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "```python\nx = 1\n",
    "```\n",
    "- item\n",
    "  continued\n",
    "1. one\n",
    "> quote\n",
    "plain words ",
    "---\n",
    "    code\n",
    "<div>html</div>\n",
    "[link](https://example.org)\n",
]


def render(blocks: MarkdownBlocks, width: int = 60) -> str:
    console = Console(width=width, color_system=None, legacy_windows=False)
    with console.capture() as capture:
        console.print(BlocksView(blocks))
    return capture.get()


def ansi(markup: str, width: int = 80) -> str:
    blocks = MarkdownBlocks()
    blocks.update(markup)
    console = Console(width=width, force_terminal=True, color_system="truecolor")
    with console.capture() as capture:
        console.print(BlocksView(blocks))
    return capture.get()


def test_a_reply_is_cut_into_its_top_level_blocks() -> None:
    blocks = top_level_blocks(REPLY)
    assert blocks[0] == "# Plan\n"
    assert blocks[2].startswith("| file |") and blocks[2].endswith("| hello.py | 1 |\n")
    assert blocks[3].startswith("```python") and blocks[3].endswith("```\n")
    assert blocks[5] == "> a quote\nlazily continued\n"
    assert blocks[6] == "Setext heading\n--------------\n"
    assert len(blocks) == 9


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=14),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_a_reply_streamed_in_any_pieces_ends_as_the_whole_reply(
    parts: list[str], cuts: list[int]
) -> None:
    text = "".join(parts)
    streamed = MarkdownBlocks()
    for cut in sorted(cuts):
        streamed.update(text[:cut])
    streamed.update(text)
    whole = MarkdownBlocks()
    whole.update(text)
    assert streamed.blocks() == whole.blocks() == top_level_blocks(text)
    assert render(streamed) == render(whole)


def test_every_block_but_the_last_settles_while_a_reply_grows() -> None:
    blocks = MarkdownBlocks()
    text = ""
    for line in REPLY.splitlines(keepends=True):
        text += line
        blocks.update(text)
        # What is settled never changes again: it is a prefix of the final blocks.
        assert blocks.settled == top_level_blocks(REPLY)[: len(blocks.settled)]
    assert blocks.settled == top_level_blocks(REPLY)[:-1]
    assert blocks.tail == ["- a loose\n\n- list\n"]


def test_a_reply_that_changes_instead_of_growing_is_cut_again() -> None:
    blocks = MarkdownBlocks()
    blocks.update("# One\n\nfirst paragraph\n\nsecond")
    assert blocks.settled == ["# One\n", "first paragraph\n"]
    blocks.update("# Two\n\nother")
    assert blocks.blocks() == ["# Two\n", "other"]
    assert "One" not in render(blocks)


def test_headings_emphasis_lists_tables_and_code_are_drawn() -> None:
    shown = render(blocks_of(REPLY))
    assert "# Plan" not in shown and "Plan" in shown
    assert "**" not in shown and "what I found in hello.py, with emphasis" in shown
    assert "|------|" not in shown
    assert " file      lines" in shown and " hello.py      1" in shown
    assert "```" not in shown and 'return f"hello {name}"' in shown
    assert "1 first step" in shown and "2 second step" in shown


def blocks_of(text: str) -> MarkdownBlocks:
    blocks = MarkdownBlocks()
    blocks.update(text)
    return blocks


def test_code_blocks_are_highlighted() -> None:
    out = ansi("```python\ndef greet(name):\n    return name\n```\n")
    # Pygments colours the keyword and the function name differently (truecolor SGR).
    keyword = out.index("def")
    name = out.index("greet")
    keyword_colour = out[out.rindex("\x1b[", 0, keyword) : keyword]
    name_colour = out[out.rindex("\x1b[", 0, name) : name]
    assert "38;2;" in keyword_colour and "38;2;" in name_colour
    assert keyword_colour != name_colour


def test_links_are_written_out_and_never_terminal_hyperlinks() -> None:
    out = ansi("see [the docs](https://example.org/x) and [bad](javascript:alert(1))\n")
    assert "\x1b]8;" not in out  # no OSC 8 hyperlink
    plain = render(blocks_of("see [the docs](https://example.org/x)\n"))
    assert "the docs (https://example.org/x)" in plain
    # markdown-it refuses javascript: links: they stay as written.
    assert "[bad](javascript:alert(1))" in render(blocks_of("[bad](javascript:alert(1))\n"))


def test_images_show_their_text_and_address() -> None:
    shown = render(blocks_of("look: ![a cat](https://example.org/cat.png) here\n"))
    assert "look: [image: a cat] (https://example.org/cat.png) here" in shown


def test_raw_html_is_shown_not_swallowed() -> None:
    shown = render(blocks_of("a <span>b</span> <!-- hidden --> c\n\n<div>\nblock\n</div>\n"))
    assert "<span>b</span>" in shown and "<!-- hidden -->" in shown
    assert "<div>" in shown and "block" in shown


def test_control_bytes_stay_visible_through_markdown() -> None:
    reply = "title \x1b]0;owned\x07 and \x1b[2J\n\n```\ncode \x1b[31mred\n```\n"
    out = ansi(screen_safe(reply))
    assert "\\e]0;owned\\a" in out or "\\e]0;owned" in out
    assert "\\e[2J" in out and "\\e[31mred" in out
    # The only escape sequences are Rich's own colours (SGR), never the reply's.
    assert "\x1b]" not in out and "\x1b[2J" not in out and "\x07" not in out


def test_the_markdown_machinery_is_imported_with_the_first_reply_not_at_start_up() -> None:
    code = (
        "import sys, zcoder.cli, zcoder.tui.app\n"
        "names = ('markdown_it', 'rich.markdown', 'pygments')\n"
        "print(sorted(m for m in names if m in sys.modules))\n"
        "from zcoder.tui.widgets.markdown_view import MarkdownBlocks\n"
        "MarkdownBlocks().update('# a reply')\n"
        "print('markdown_it' in sys.modules)\n"
    )
    assert fresh_python_lines(code) == ["[]", "True"]
