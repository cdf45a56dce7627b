"""The sessions sidebar in a narrow terminal: zcoder in tmux, resized as a user resizes.

Below SIDEBAR_MIN_TERMINAL_WIDTH columns the sidebar hides itself, so the transcript keeps
the width; it comes back when there is room. What it showed stays reachable: Ctrl+B shows
it anyway, /sessions lists the sessions with their ids. The screen is read from tmux.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import TmuxInstance, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn
from zcoder.tui.widgets.shared import SIDEBAR_MIN_TERMINAL_WIDTH

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TITLE = "● (no prompt yet)"  # the open session's row in the sidebar, before any prompt
CTRL_B = "02"


def _resize(zc: TmuxInstance, width: int, height: int) -> None:
    zc.tmux("resize-window", "-t", "zc", "-x", str(width), "-y", str(height))


def _prompt_starts_at_column_0(zc: TmuxInstance) -> bool:
    return any(row.startswith("▊▔") for row in zc.screen())


def test_a_narrow_terminal_hides_the_sidebar_and_a_wide_one_brings_it_back(
    world: World,
) -> None:
    assert 60 < SIDEBAR_MIN_TERMINAL_WIDTH <= 100
    server = world.server(demo=False)
    zc = start_in_tmux(world, "alpha", server, size=(100, 24))
    zc.wait_text(TITLE)  # wide: the sidebar lists the session, with its id below
    row = zc.rows_with(TITLE)[0]
    session_id = zc.screen()[row + 1].split("│")[0].strip()
    assert re.fullmatch(r"[0-9a-z_]{8,}", session_id), session_id

    _resize(zc, 60, 15)
    zc.wait_gone(TITLE)
    zc.wait_gone(session_id)
    # The transcript and the prompt take the width (in the frame after the sidebar went).
    wait_until(lambda: _prompt_starts_at_column_0(zc), what="the prompt at column 0")

    zc.send_hex(CTRL_B)  # asked for: shown anyway
    zc.wait_text(TITLE)
    zc.send_hex(CTRL_B)
    zc.wait_gone(TITLE)

    zc.type_text("/sessions")
    zc.wait_text("/sessions")
    zc.send_hex("0d")
    zc.wait_text(session_id)  # the listing names it; the sidebar stays hidden (issue 27)
    assert TITLE not in zc.screen_text
    assert _prompt_starts_at_column_0(zc)

    _resize(zc, 100, 24)
    zc.wait_text(TITLE)  # room again: back
    zc.send_hex(to_hex("\x11"))
    assert zc.wait_exit() in (0, None)


def test_typing_after_sessions_goes_to_the_prompt_not_the_list(world: World) -> None:
    # /sessions leaves the focus in the prompt: what the user types next is the next
    # prompt, never swallowed by the list.
    server = world.server(demo=False)
    zc = start_in_tmux(world, "alpha", server, size=(100, 24))
    zc.wait_text(TITLE)
    zc.type_text("/sessions")
    zc.wait_text("▊ /sessions")
    zc.send_hex("0d")
    zc.wait_gone("▊ /sessions")
    zc.wait_text("Sessions of")
    zc.type_text("abc")
    zc.wait_text("▊ abc")  # in the prompt, not lost in the list
    zc.send_hex("7f 7f 7f")
    zc.wait_gone("▊ abc")
    zc.send_hex(to_hex("\x11"))
    assert zc.wait_exit() in (0, None)


@pytest.mark.parametrize("one_at_a_time", [False, True], ids=["burst", "slowly"])
def test_commands_typed_right_after_sessions_all_run(world: World, one_at_a_time: bool) -> None:
    """Issue 27 item 10: the Enter after /sessions is the prompt's, not the list's:
    `/sessions⏎/context⏎` runs /context, `/diff⏎/undo⏎` runs both (they were left unsent,
    or joined into `/diff/undo`, when the list took the focus)."""
    server = world.server(demo=False)
    zc = start_in_tmux(world, "alpha", server, size=(100, 40))
    zc.wait_text(TITLE)
    zc.type_text("/sessions\r/context\r", one_at_a_time=one_at_a_time)
    zc.wait_text("› /context")
    assert "/sessions/context" not in zc.screen_text
    zc.type_text("/sessions\r/diff\r/undo\r", one_at_a_time=one_at_a_time)
    zc.wait_text("Nothing to undo")
    zc.wait_text("No file changes in this session")
    assert "/diff/undo" not in zc.screen_text
    assert zc.rows_with("▊▔") and not zc.rows_with("▊ /")  # the prompt is empty again
    zc.send_hex(to_hex("\x11"))
    assert zc.wait_exit() in (0, None)


def test_a_long_title_keeps_the_session_id_in_the_sidebar_at_60x15(world: World) -> None:
    # A title past the sidebar's ~27 columns wrapped onto the id's row: the id was gone.
    server = world.server(demo=False)
    server.enqueue(Turn.text("done"))
    zc = start_in_tmux(world, "alpha", server, size=(60, 15))
    zc.type_text("rename the users table to accounts everywhere")
    zc.send_hex("0d")
    zc.wait_text("done")
    zc.send_hex(CTRL_B)
    zc.wait_text("● rename the users")
    row = zc.rows_with("● rename the users")[0]
    screen = zc.screen()
    assert screen[row].split("│")[0].rstrip().endswith("…"), screen
    session_id = screen[row + 1].split("│")[0].strip()
    assert re.fullmatch(r"[0-9]+_[0-9]{5}", session_id), screen
    zc.send_hex(to_hex("\x11"))
    assert zc.wait_exit() in (0, None)
