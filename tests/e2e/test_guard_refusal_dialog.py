"""The dialog of a command the guard refuses (coding profile), with the bytes a terminal
sends: after ``a`` on a harmless command, a prompt-injected model's ``rm -rf ~`` opens a
dialog that names the guard's reason and offers no ``a``; pressing ``a`` there does
nothing, and ``n`` after it refuses. The real zcoder in tmux, its $HOME a private
directory holding a canary; what ran is read from that directory and the fake model's
requests.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import DIALOG_ARMED, World, wait_until
from tests.e2e.tmux import ENTER, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

RUN = "Run this command?"
REFUSED = "guard refuses this command"
WIPE_HOME = "rm -rf ~"


@pytest.mark.parametrize("size", [(120, 35), (60, 15)], ids=["120x35", "60x15"])
def test_a_does_nothing_in_the_refused_commands_dialog(world: World, size: tuple[int, int]) -> None:
    home = world.root / "user-home"
    home.mkdir()
    (home / "thesis.txt").write_text("four years of work\n")
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": "echo harmless"})),
        Turn.tool_calls(call("run_command", {"command": WIPE_HOME})),
        Turn.text("cleaned up"),
    )
    zc = start_in_tmux(world, "alpha", server, size=size, HOME=str(home))
    zc.type_text("tidy up")
    zc.wait_text("tidy up")
    zc.send_hex(ENTER)
    zc.wait_text(RUN)
    zc.wait_text(DIALOG_ARMED)
    zc.send_hex(to_hex("a"))  # allow commands for the rest of the run
    zc.wait_text(REFUSED)
    zc.wait_text(DIALOG_ARMED)
    screen = zc.screen_text
    assert "recursive rm on '~'" in screen
    assert "[a] allow" not in screen

    zc.send_hex(to_hex("a"))  # not an answer here
    zc.send_hex(to_hex("n"))  # keys are read in order: if `a` had answered, this is late
    zc.wait_text("cleaned up")
    assert (home / "thesis.txt").read_text() == "four years of work\n"
    wait_until(lambda: len(server.chat_bodies) == 3, what="the model to get the refusal")
    result = server.chat_bodies[2]["messages"][-1]["content"]
    assert "the user was asked and said no" in result, result
