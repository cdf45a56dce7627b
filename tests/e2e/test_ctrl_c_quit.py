"""Ctrl+C on an empty prompt when nothing runs (issue 27 item 11): the real zcoder in tmux,
Ctrl+C as the byte 0x03 a terminal sends.

One press says that a second quits and zcoder stays; a second within the window quits. The
window is set through the launcher (tests/fixtures/zcoder_patched.py), long or nil, so no
test depends on how fast this machine is.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import World
from tests.e2e.tmux import patched_zcoder, start_in_tmux, to_hex
from zcoder.tui.state.interrupt import QUIT_AGAIN_TEXT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

CTRL_C = "03"
CTRL_Q = "11"


def window(seconds: float) -> tuple[str, ...]:
    return patched_zcoder(f"zcoder.tui.state.interrupt:QUIT_WINDOW_SECONDS={seconds}")


@pytest.mark.parametrize("size", [(60, 15), (120, 35)], ids=["60x15", "120x35"])
def test_one_ctrl_c_on_an_empty_prompt_asks_for_a_second_which_quits(
    world: World, size: tuple[int, int]
) -> None:
    server = world.server(demo=False)
    zc = start_in_tmux(world, "alpha", server, size=size, python_args=window(3600))
    zc.send_hex(CTRL_C)
    zc.wait_text(QUIT_AGAIN_TEXT)
    assert zc.alive()
    zc.type_text("still here")  # typed after the first press: zcoder took it
    zc.wait_text("still here")
    assert zc.alive()
    zc.send_hex(CTRL_C)  # clears that draft (it goes to the history)
    zc.wait_gone("still here")
    assert zc.alive()
    zc.send_hex(CTRL_C)  # the prompt is empty again: asks again ...
    zc.wait_text(QUIT_AGAIN_TEXT)
    assert zc.alive()
    zc.send_hex(CTRL_C)  # ... and the second press quits
    assert zc.wait_exit() in (0, None)  # tmux 3.3a may not record the status (test_status)


def test_a_second_ctrl_c_after_the_window_only_asks_again(world: World) -> None:
    server = world.server(demo=False)
    zc = start_in_tmux(world, "alpha", server, size=(60, 15), python_args=window(0))
    # The window (none at all) has passed by the second press, however soon it comes.
    zc.send_hex(CTRL_C, CTRL_C)
    zc.type_text("typed after")  # keys arrive in order: the press above was handled first
    zc.wait_text("typed after")
    assert zc.alive()
    zc.send_hex(to_hex("\x11"))  # Ctrl+Q
    assert zc.wait_exit() in (0, None)


def test_ctrl_c_in_one_burst_quits(world: World) -> None:
    server = world.server(demo=False)
    zc = start_in_tmux(world, "alpha", server, size=(60, 15), python_args=window(3600))
    zc.send_hex(CTRL_C, CTRL_C)
    assert zc.wait_exit() in (0, None)
