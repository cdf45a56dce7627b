"""A goal in a real terminal at 60x15: /goal typed as keys, the header's goal while it
runs, Escape (the byte 0x1b) pausing it, /goal resume, and the check's verdict, read off
the screen.

The goal's first turn runs a command that waits for a file the test makes (``gate-1``),
so "while the goal's turn runs" is a fact the test arranges, not a race.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, start_in_tmux
from tests.fixtures.fake_ollama import FakeOllama, Turn, call

pytestmark = pytest.mark.timeout(150)

ESCAPE = "1b"
GATED = "while [ ! -e gate-1 ]; do sleep 0.05; done; echo passed"


def send(a: TmuxInstance, text: str) -> None:
    """Type ``text`` as keys, see it in the prompt, then Enter."""
    a.type_text(text)
    a.wait_text(text)
    a.send_hex(ENTER)


def header(a: TmuxInstance) -> str:
    return a.screen()[0]


def test_a_goal_shows_in_a_small_header_pauses_on_escape_and_ends_when_accepted(
    world: World,
) -> None:
    server: FakeOllama = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": GATED}), prompt_eval_count=12_000),
        Turn.tool_calls(call("write_file", {"path": "notes.md", "content": "FINAL\n"})),
        Turn.tool_calls(call("finish", {"status": "complete", "response": "notes.md written"})),
        Turn.tool_calls(call("verdict", {"verdict": "accept", "reasons": "notes.md holds FINAL"})),
    )
    a = start_in_tmux(world, "alpha", server, args=("--yes",), size=(60, 15))
    send(a, "/goal write notes.md --tokens 50k")
    a.wait_text("Goal turn 1")
    wait_until(lambda: "goal 1 · 0/50k" in header(a), what="the goal in the header")
    assert len(header(a)) <= 60

    a.send_hex(ESCAPE)  # the goal's turn runs its command: Escape stops it and pauses
    a.wait_text("Goal paused (Escape)")
    wait_until(lambda: "goal paused" in header(a), what="the paused goal in the header")
    requests = len(server.chat_bodies)

    send(a, "/goal resume")
    a.wait_text("Goal done")
    wait_until(lambda: "goal done" in header(a), what="the goal done in the header")
    assert len(header(a)) <= 60
    assert (a.workspace / "notes.md").read_text() == "FINAL\n"
    assert len(server.chat_bodies) == requests + 3  # the turn's two requests, one check
    assert not (a.workspace / "gate-1").exists()


def test_ctrl_n_while_a_goal_runs_says_how_to_stop_it_and_keeps_the_session(world: World) -> None:
    server: FakeOllama = world.server(demo=False)
    server.enqueue(Turn.stall())  # the goal's first turn waits for the model
    a = start_in_tmux(world, "alpha", server, size=(60, 15))
    send(a, "/goal write notes.md")
    a.wait_text("Goal turn 1")
    wait_until(lambda: len(server.chat_bodies) >= 1, what="the goal's request")
    a.send_hex("0e")  # Ctrl+N
    a.wait_text("stops it first.")
    assert "New session." not in a.screen_text
    a.send_hex(ESCAPE)
    a.wait_text("Goal paused (Escape)")
    a.send_hex("0e")
    a.wait_text("New session.")
