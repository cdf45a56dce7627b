"""Images with the real zcoder in tmux: a screenshot's path pasted as a terminal pastes a
dragged file (a bracketed paste: ``1b 5b 32 30 30 7e`` ... ``1b 5b 32 30 31 7e``, quoted
with its space), then Enter (``0d``): the transcript shows ``🖼 path (WxH, size)`` and a
vision model gets the bytes; a model without vision is not sent them and the screen says
why. At 60x15 and 140x40."""

from __future__ import annotations

import base64
import re

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, PASTE_END, PASTE_START, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn
from tests.fixtures.images import png_bytes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

PNG = png_bytes(64, 48)


@pytest.mark.parametrize("size", [(60, 15), (140, 40)])
def test_a_pasted_image_path_is_attached_and_reaches_a_vision_model(
    world: World, size: tuple[int, int]
) -> None:
    server = world.server(demo=False)
    server.vision = True
    server.enqueue(Turn.text("A red rectangle."))
    pictures = world.root / "Pictures"
    pictures.mkdir()
    (pictures / "my shot.png").write_bytes(PNG)
    world.workspace("proj")
    zc = start_in_tmux(world, "proj", server, size=size, ZCODER_RELAY="off")

    pasted = to_hex(f"'{pictures / 'my shot.png'}'")
    zc.send_hex(to_hex("what is in ") + f" {PASTE_START} {pasted} {PASTE_END} ")
    zc.wait_text("my shot.png'")  # the paste is text in the prompt, not sent
    zc.send_hex(ENTER)
    zc.wait_text(re.compile(r"🖼 \S*/Pictures/my shot\.png \(64x48, 149\s+bytes\)"))
    zc.wait_text("A red rectangle.")
    body = wait_until(lambda: server.chat_bodies[0] if server.chat_bodies else None)
    assert body["messages"][-1]["images"] == [base64.b64encode(PNG).decode()]


def test_a_model_without_vision_is_not_sent_the_image_and_the_screen_says_why(
    world: World,
) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("ok"))
    (world.workspace("proj") / "shot.png").write_bytes(PNG)
    zc = start_in_tmux(world, "proj", server, size=(140, 40), ZCODER_RELAY="off")
    zc.send_hex(to_hex("what is shot.png?") + f" {ENTER}")
    zc.wait_text("🖼 shot.png (64x48, 149 bytes) was not sent")
    zc.wait_text("ZCODER_VISION=on")
    body = wait_until(lambda: server.chat_bodies[0] if server.chat_bodies else None)
    assert "images" not in body["messages"][-1]
