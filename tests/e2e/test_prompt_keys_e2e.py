"""Keys of the prompt as a terminal sends them: the real zcoder in tmux, raw bytes.

Ctrl+C is the byte 0x03 (the terminal is in raw mode, so it is a key, not SIGINT);
PageUp ``ESC [ 5 ~``, PageDown ``ESC [ 6 ~``, Shift+Up ``ESC [ 1 ; 2 A``. The screen is
read back from tmux; nothing is timed.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import TmuxInstance, patched_zcoder, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

CTRL_C = "03"
UP = "1b 5b 41"
DRAFT = "a long careful draft"


@pytest.mark.parametrize("size", [(60, 15), (120, 35)], ids=["60x15", "120x35"])
def test_ctrl_c_clears_a_draft_and_up_brings_it_back(world: World, size: tuple[int, int]) -> None:
    server = world.server(demo=False)
    # Ctrl+C's window long enough that the last two presses below never race a clock.
    long_window = patched_zcoder("zcoder.tui.state.interrupt:QUIT_WINDOW_SECONDS=3600")
    zc = start_in_tmux(world, "alpha", server, size=size, python_args=long_window)
    zc.type_text(DRAFT)
    zc.wait_text(DRAFT)

    zc.send_hex(CTRL_C)
    zc.wait_text("draft cleared")
    zc.wait_gone(DRAFT)
    assert zc.alive()  # the draft went, zcoder stayed

    zc.send_hex(UP)
    zc.wait_text(DRAFT)  # back from the history
    zc.send_hex(CTRL_C)  # cleared again
    zc.wait_gone(DRAFT)
    assert zc.alive()
    assert server.chat_bodies == [] or all(
        DRAFT not in str(body["messages"]) for body in server.chat_bodies
    )  # never sent

    # An empty prompt when nothing runs: one Ctrl+C asks for a second, which quits.
    zc.send_hex(CTRL_C)
    zc.wait_text("Press Ctrl+C again to quit")
    assert zc.alive()
    zc.send_hex(CTRL_C)
    assert zc.wait_exit() in (0, None)  # tmux 3.3a may not record the status (test_status)


def test_a_pasted_draft_comes_back_whole(world: World) -> None:
    server = world.server(demo=False)
    zc = start_in_tmux(world, "alpha", server, size=(80, 24))
    pasted = "\n".join(f"pasted line {n}" for n in range(30))  # collapsed in the prompt
    zc.paste(pasted)
    zc.wait_text("[pasted 30 lines #1]")
    zc.send_hex(CTRL_C)
    zc.wait_gone("[pasted 30 lines #1]")
    zc.send_hex(UP)
    # Collapsed again, as it was before Ctrl+C (issue 27), and standing for the whole text.
    zc.wait_text("[pasted 30 lines #1]")
    assert "pasted line 0" not in zc.screen_text
    zc.send_hex("0d")
    wait_until(lambda: server.chat_bodies, what="the prompt to reach the model")
    sent = str(server.chat_bodies[-1]["messages"])
    assert "pasted line 0" in sent and "pasted line 29" in sent
    assert "[pasted 30 lines" not in sent
    zc.send_hex(to_hex("\x11"))  # Ctrl+Q
    assert zc.wait_exit() in (0, None)


PAGE_UP = "1b 5b 35 7e"
PAGE_DOWN = "1b 5b 36 7e"
SHIFT_UP = "1b 5b 31 3b 32 41"
SHIFT_DOWN = "1b 5b 31 3b 32 42"
LINES = 60


def _numbers_on_screen(zc: TmuxInstance) -> list[int]:
    return [int(n) for n in re.findall(r"reply line (\d{3})", zc.screen_text)]


@pytest.mark.parametrize("size", [(60, 15), (120, 35)], ids=["60x15", "120x35"])
def test_page_and_shift_keys_typed_in_the_prompt_scroll_the_transcript(
    world: World, size: tuple[int, int]
) -> None:
    server = world.server(demo=False)
    reply = "\n\n".join(f"reply line {n:03d}." for n in range(1, LINES + 1))
    server.enqueue(Turn.text(reply))
    zc = start_in_tmux(world, "alpha", server, size=size, ZCODER_RELAY="off")
    zc.type_text("a long answer please")
    zc.wait_text("a long answer please")
    zc.send_hex("0d")
    zc.wait_text(f"reply line {LINES:03d}.")
    zc.wait_text("Ready")
    zc.type_text("my draft")  # the focus is in the prompt, with text in it
    zc.wait_text("my draft")
    at_end = max(_numbers_on_screen(zc))

    zc.send_hex(PAGE_UP)
    wait_until(lambda: max(_numbers_on_screen(zc), default=0) < at_end, what="a page back")
    paged = max(_numbers_on_screen(zc))
    zc.send_hex(SHIFT_UP)
    wait_until(lambda: max(_numbers_on_screen(zc), default=0) < paged, what="rows back")
    assert "my draft" in zc.screen_text  # the prompt kept its text

    zc.send_hex(SHIFT_DOWN)
    wait_until(lambda: max(_numbers_on_screen(zc), default=0) >= paged, what="rows on")
    zc.send_hex(PAGE_DOWN, PAGE_DOWN, PAGE_DOWN, PAGE_DOWN)
    wait_until(lambda: max(_numbers_on_screen(zc), default=0) == at_end, what="the end")
    assert "my draft" in zc.screen_text

    # Back at the end the transcript follows new output again: the next reply shows.
    server.enqueue(Turn.text("the second reply"))
    zc.send_hex("0d")
    zc.wait_text("the second reply")
