"""A reply that loops is stopped while it streams (issue 30 item 8), seen as a user sees
it: the real zcoder in tmux, a fake server that streams one piece of text for ever."""

from __future__ import annotations

import pytest

from tests.e2e.harness import World
from tests.e2e.tmux import ENTER, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import ENDLESS_PIECE, Turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.mark.parametrize("size", [(60, 15), (140, 40)], ids=["60x15", "140x40"])
def test_a_looping_reply_is_cut_and_the_turn_says_incomplete(
    world: World, size: tuple[int, int]
) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.endless(before="Packages: "), Turn.text("All good now."))
    zc = start_in_tmux(world, "alpha", server, size=size)
    zc.send_hex(to_hex("list the packages"), ENTER)
    zc.wait_text("Incomplete")
    zc.wait_text("times in a row")
    assert server.wait_for_disconnect()  # the stream was cut, not left to run
    assert zc.screen_text.count(ENDLESS_PIECE.strip()) <= 3  # not a screen of copies
    zc.send_hex(to_hex("go on"), ENTER)  # the session goes on
    zc.wait_text("All good now.")
