"""The tmux harness itself: zcoder runs in a real pane, bytes reach it, the screen reads back."""

from __future__ import annotations

import pytest

from tests.e2e.harness import World
from tests.e2e.tmux import TmuxInstance, start_in_tmux, to_hex

pytestmark = pytest.mark.slow


def test_typed_bytes_reach_the_prompt_and_the_screen_reads_back(world: World) -> None:
    server = world.server()
    zc = start_in_tmux(world, "proj", server, size=(100, 30))
    assert isinstance(zc, TmuxInstance)
    screen = zc.screen()
    assert len(screen) == 30 and all(len(row) <= 100 for row in screen)
    zc.type_text("hello in one burst")
    zc.wait_text("hello in one burst")
    zc.send_slowly(to_hex(" and slowly"))
    zc.wait_text("hello in one burst and slowly")
    # The program's own output is kept raw: it switched to the alternate screen.
    assert "\x1b[?1049h" in zc.raw_output
    assert zc.quit() == 0
    assert not zc.alive()


@pytest.mark.parametrize("mode", ["off", "on", "always"])
def test_each_instance_has_its_own_tmux_server_with_its_extended_keys(
    world: World, mode: str
) -> None:
    zc = start_in_tmux(world, f"p-{mode}", None, extended_keys=mode, ZCODER_RELAY="off")
    # zcoder turns tmux's extended keys on while it runs (tui/terminal.py), then restores.
    assert zc.server_option("extended-keys") == ("on" if mode == "off" else mode)
    assert zc.quit() == 0
    assert zc.server_option("extended-keys") == mode
