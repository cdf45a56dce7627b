"""Status you can trust, in a real terminal: Ctrl+C as the byte a terminal sends (0x03),
the spinner's count while the model is slow, and the title in the raw output.

What happened is read from the fake Ollama (a stopped request is one the client hung up
on), the exit status and the screen; never from how long anything took.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.harness import Instance, World, wait_until
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.model_requests import stopped_requests

pytestmark = pytest.mark.timeout(90)

CTRL_C = "\x03"
QUIT_AGAIN = "Press Ctrl+C again to quit"
# The badge while the model has not answered for a second or more.
COUNTING = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting for model [1-9]\d*s")


def title(project: str, state: str) -> str:
    return f"\x1b]2;zcoder · {project} · {state}\x07"


def start_slow_turn(world: World) -> tuple[FakeOllama, Instance, int]:
    server = world.server(demo=False)
    server.enqueue(Turn.stall(), Turn.text("the second answer"))
    a = world.start("alpha", server)
    mark = a.mark()
    a.submit("take your time")
    a.wait_text(COUNTING, since=mark)  # the model is silent; the count goes on
    return server, a, mark


def test_ctrl_c_stops_a_slow_turn_and_zcoder_stays(world: World) -> None:
    server, a, mark = start_slow_turn(world)
    assert title("alpha", "Waiting for model") in a.raw_output
    a.send_key(CTRL_C)
    wait_until(lambda: stopped_requests(server) == 1, what="the model's request to be cancelled")
    a.wait_text("✻ Stopped after", since=mark)
    a.wait_text(QUIT_AGAIN, since=mark)
    a.wait_state("ready")
    assert a.alive()
    wait_until(lambda: title("alpha", "Stopped") in a.raw_output, what="the Stopped title")
    # Still usable: the next prompt is answered.
    a.submit("and now?")
    a.wait_text("the second answer", since=mark)
    assert a.alive()


def test_a_second_ctrl_c_within_two_seconds_quits(world: World) -> None:
    server, a, mark = start_slow_turn(world)
    a.send_key(CTRL_C)
    a.wait_text(QUIT_AGAIN, since=mark)
    a.send_key(CTRL_C)
    assert a.wait_exit() == 0
    assert stopped_requests(server) == 1


def test_two_ctrl_c_when_idle_quit_and_the_title_is_restored(world: World) -> None:
    server = world.server(demo=False)
    a = world.start("alpha", server)
    wait_until(lambda: title("alpha", "Ready") in a.raw_output, what="the title")
    a.send_key(CTRL_C * 2)  # idle: the first asks, the second (in the same burst) quits
    assert a.wait_exit() == 0
    raw = a.raw_output
    push, pop = raw.find("\x1b[22;0t"), raw.rfind("\x1b[23;0t")
    first_title = raw.find("\x1b]2;")
    assert -1 < push < first_title < pop
    assert raw.count(title("alpha", "Ready")) == 1  # not written again while idle


def test_a_hostile_project_name_cannot_end_the_title_early(world: World) -> None:
    name = "p\x07\x1b]0;pwned\x1b\\x"
    server = world.server(demo=False)
    a = world.start(name, server)
    expected = title("p\\x07\\e]0;pwned\\e\\x", "Ready")
    wait_until(lambda: expected in a.raw_output, what="the escaped title")
    assert "]0;pwned" not in a.raw_output.replace("\\e]0;pwned", "")
    a.quit()


@pytest.mark.slow
def test_at_60x15_in_tmux_the_header_keeps_status_model_and_relay(world: World) -> None:
    """A real terminal (tmux) of 60 columns and 15 rows: the header row as tmux shows it,
    the pane's title, and Ctrl+C as the byte tmux passes on."""
    from tests.e2e.tmux import start_in_tmux

    model = "qwen3-coder:30b-a3b-instruct-q4_K_M"
    server = world.server(demo=False, models=(model,))
    server.enqueue(Turn.stall())
    zc = start_in_tmux(world, "alpha", server, size=(60, 15), ZCODER_MODEL=model)
    zc.wait_text("relay: ready")
    zc.type_text("take your time")
    zc.send_hex("0d")
    zc.wait_text(COUNTING)
    header = zc.screen()[0]
    assert COUNTING.search(header), header
    assert "relay: busy" in header and "qwen3-coder:30b" in header and "…" in header
    assert zc.tmux("display-message", "-p", "-t", "zc", "#{pane_title}").strip() == (
        "zcoder · alpha · Waiting for model"
    )
    zc.send_hex("03")
    # The turn's status and the relay's state are drawn by separate updates: wait for both
    # (a loaded machine drew "Stopped" a frame before "relay: ready").
    zc.wait_text(re.compile(r" Stopped .*relay: ready"))
    header = zc.screen()[0]
    assert " Stopped " in header and "relay: ready" in header and "qwen3" in header, header
    wait_until(lambda: stopped_requests(server) == 1, what="the model's request to be cancelled")
    zc.send_hex("03")
    # tmux 3.3a sometimes marks the pane dead with no exit status (seen on main too, with
    # Ctrl+Q); the exit status itself is asserted by the pty tests above.
    assert zc.wait_exit() in (0, None)
    # The pane's own title is back (tmux keeps a title stack).
    assert "zcoder" not in zc.tmux("display-message", "-p", "-t", "zc", "#{pane_title}")
