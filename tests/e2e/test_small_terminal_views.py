"""Views in a 60x15 terminal (issue 27 item 17): the real zcoder in tmux, the screen read
back. The output viewer (Ctrl+T) keeps its whole hint and opens an output that fits at its
first line; /help's wrapped descriptions keep their indent."""

from __future__ import annotations

import re
from functools import partial

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import TmuxInstance, start_in_tmux, to_hex

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SIZE = (60, 15)
CTRL_T = "14"
ESCAPE = "1b"


def open_output(zc: TmuxInstance, command: str, number: int) -> None:
    """Run ``command`` as the ``number``th !command of a transcript holding no other,
    then open its whole output (Ctrl+T) once it has ended."""
    zc.type_text(f"!{command}\r")
    zc.wait_text("[exit code 0]")
    zc.send_hex(CTRL_T)
    zc.wait_text(f"({number} of {number})")


def output_rows(zc: TmuxInstance) -> int:
    """The rows the viewer has for the output: between its title and its keys."""
    title = zc.rows_with(" of 1)")[0]
    keys = zc.rows_with("Esc/q close")[0]
    return keys - title - 1


def test_the_output_viewer_keeps_its_hint_and_an_output_that_fits_starts_at_its_top(
    world: World,
) -> None:
    zc = start_in_tmux(world, "alpha", world.server(demo=False), size=SIZE)
    open_output(zc, "true", 1)
    zc.wait_text("Home/End scroll")  # the whole hint, wrapped, not cut
    rows = output_rows(zc)
    zc.send_hex(ESCAPE)
    zc.wait_gone("Esc/q close")
    # An output exactly as tall as the view: numbered lines and the exit line.
    zc.type_text("/new\r")  # the transcript holds nothing of the first command now
    zc.wait_gone("$ true")
    open_output(zc, f"seq 101 {100 + rows - 1}", 1)
    zc.wait_text("█ [exit code 0]")  # the viewer opens at the output's end
    shown = [int(n) for n in re.findall(r"│?█ (1\d\d) ", zc.screen_text + " ")]
    assert shown[0] == 101, zc.screen_text  # its first line is on screen
    zc.send_hex(ESCAPE)
    zc.send_hex(to_hex("\x11"))
    assert zc.wait_exit() in (0, None)


HEADINGS = ("Commands:", "Aliases:", "Keys:", "Custom commands and skills of this workspace:")
PAGE_UP = "1b 5b 35 7e"


def help_rows(zc: TmuxInstance) -> list[str]:
    """The transcript's rows on screen that belong to /help's text (the entry's padding
    of one column removed): from the header to the prompt's top border."""
    screen = zc.screen()
    prompt_top = next(n for n, row in enumerate(screen) if row.startswith("▊▔"))
    rows = [row[1:].rstrip(" ▁▂▃▄▅▆▇█▔") for row in screen[1:prompt_top]]
    return [row for row in rows if row.strip() and not row.startswith("↓ new output below")]


def changed(zc: TmuxInstance, before: str) -> bool:
    return zc.screen_text != before


def test_help_descriptions_wrap_under_themselves_at_60_columns(world: World) -> None:
    zc = start_in_tmux(world, "alpha", world.server(demo=False), size=SIZE)
    zc.type_text("/help\r")
    zc.wait_text("Ctrl+Q")
    for page in range(3):  # the end of /help, then two pages back
        rows = help_rows(zc)
        assert rows, zc.screen_text
        for row in rows:
            # A heading, the command's echo, or a row of the two columns (a form, a key, or
            # its description's lines): never a description's line at the left edge.
            assert row in HEADINGS or row.startswith(("› /help", "  ")), zc.screen_text
        if page < 2:
            before = zc.screen_text
            zc.send_hex(PAGE_UP)  # typed in the prompt: the transcript scrolls
            wait_until(partial(changed, zc, before), what="PageUp to scroll the transcript")
    zc.send_hex(to_hex("\x11"))
    assert zc.wait_exit() in (0, None)
