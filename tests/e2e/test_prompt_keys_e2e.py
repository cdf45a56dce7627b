"""Keys of the prompt as a terminal sends them: the real zcoder in tmux, raw bytes.

Ctrl+C is the byte 0x03 (the terminal is in raw mode, so it is a key, not SIGINT). The
screen is read back from tmux; nothing is timed.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import World
from tests.e2e.tmux import start_in_tmux, to_hex

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

CTRL_C = "03"
UP = "1b 5b 41"
DRAFT = "a long careful draft"


@pytest.mark.parametrize("size", [(60, 15), (120, 35)], ids=["60x15", "120x35"])
def test_ctrl_c_clears_a_draft_and_up_brings_it_back(world: World, size: tuple[int, int]) -> None:
    server = world.server(demo=False)
    zc = start_in_tmux(world, "alpha", server, size=size)
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

    # An empty prompt: as before, one Ctrl+C when nothing runs quits.
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
    zc.wait_text("pasted line 0")  # the text itself, not a placeholder standing for nothing
    zc.send_hex(to_hex("\x11"))  # Ctrl+Q
    assert zc.wait_exit() in (0, None)
