"""Keys typed while zcoder starts (issue 27 item 10): the real zcoder in tmux, its start-up
held at a gate (tests/fixtures/zcoder_patched.py) as a model loading holds ``make demo``'s.

What is typed before the first frame is neither echoed by the terminal nor lost: it is in
the prompt once the app is up. The raw output (everything written to the pane, from its
first byte) shows that nothing was echoed; the terminal's settings are the shell's again
after zcoder exits.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import patched_zcoder, start_in_tmux, to_hex

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

ALT_SCREEN = "\x1b[?1049h"  # the app's first frame starts here


@pytest.mark.parametrize("one_at_a_time", [False, True], ids=["burst", "slowly"])
def test_keys_typed_before_the_first_frame_reach_the_prompt_unechoed(
    world: World, one_at_a_time: bool
) -> None:
    server = world.server(demo=False)
    gate = world.root / "gate"
    zc = start_in_tmux(
        world, "alpha", server, size=(80, 20), wait=False, python_args=patched_zcoder(gate=gate)
    )
    waiting = gate.with_name("gate.waiting")
    wait_until(waiting.exists, timeout=30, what="zcoder to reach its slow start")
    zc.type_text("typed while it starts", one_at_a_time=one_at_a_time)
    gate.write_text("go\n", encoding="utf-8")  # the model is loaded, say
    zc.wait_ready()
    zc.wait_text("▊ typed while it starts")  # in the prompt, whole and in order
    before_app = zc.raw_output.partition(ALT_SCREEN)[0]
    assert "typed" not in before_app  # the terminal did not echo it
    assert len(zc.rows_with("typed while it starts")) == 1  # the prompt's row alone
    zc.send_hex("0d")  # it is a prompt like any other: Enter sends it
    wait_until(lambda: server.chat_bodies, what="the prompt to reach the model")
    assert "typed while it starts" in str(server.chat_bodies[-1]["messages"])
    zc.send_hex(to_hex("\x11"))  # Ctrl+Q
    assert zc.wait_exit() in (0, None)
    assert {"echo", "icanon"} <= zc.terminal_modes()  # the shell's settings again


def test_a_start_that_fails_gives_the_terminal_back(world: World) -> None:
    """The terminal is held from before the start's slow part: when the start fails (here:
    --resume of no such session), the settings are put back all the same."""
    zc = start_in_tmux(world, "alpha", None, size=(80, 20), wait=False, args=("--resume", "nope"))
    assert zc.wait_exit() == 2
    assert {"echo", "icanon"} <= zc.terminal_modes()
