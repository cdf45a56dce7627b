"""Steering a running turn in a real terminal (issue 29's "Done when"): keys as the bytes a
terminal sends (Enter 0x0d, Ctrl+G 0x07) through tmux to zcoder's parser.

The turn's three tool calls are commands that wait for a file the test makes (``gate``),
so "during the first call" is a fact the test arranges, not a race: a message sent then
must reach the model in the request right after that call's result. What was sent is read
from the fake Ollama's recorded requests; what waits, from the session store.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(150)

CTRL_G = "07"
ESCAPE = "1b"


def gated(n: int) -> Turn:
    """A tool call that runs until the file ``gate-N`` exists in the workspace."""
    command = f"while [ ! -e gate-{n} ]; do sleep 0.05; done; echo passed {n}"
    return Turn.tool_calls(call("run_command", {"command": command}, id=f"c{n}"))


def open_gate(workspace: Path, n: int) -> None:
    (workspace / f"gate-{n}").touch()


def send(a: TmuxInstance, text: str, key: str) -> None:
    """Type ``text`` (typed keys, not a paste), see it in the prompt, then ``key``."""
    a.type_text(text)
    a.wait_text(text)
    a.send_hex(key)


def messages(server: FakeOllama, n: int) -> list[dict[str, Any]]:
    """The messages of the model's request number ``n`` (0-based)."""
    return list(server.chat_bodies[n]["messages"])


def requests(server: FakeOllama, count: int) -> None:
    wait_until(lambda: len(server.chat_bodies) >= count, what=f"{count} model requests")


def pending_saved(world: World, workspace: Path) -> list[tuple[str, str]]:
    with SessionStore(world.home("alpha")) as store:
        [info] = store.list_sessions(workspace, "coding")
        return store.load(info.id, workspace, "coding").pending


def session_id(world: World, workspace: Path) -> str:
    with SessionStore(world.home("alpha")) as store:
        [info] = store.list_sessions(workspace, "coding")
        return info.id


def test_enter_steers_the_running_turn_and_ctrl_g_queues_a_follow_up(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(gated(1), gated(2), gated(3), Turn.text("all three done"))
    server.enqueue(Turn.text("the follow-up is answered"))
    a = start_in_tmux(world, "alpha", server, args=("--yes",), size=(140, 40))
    workspace = a.workspace
    a.submit("run the three steps")
    a.wait_text("Enter steer · Ctrl+G queue")  # the prompt's hint while a turn runs
    requests(server, 1)

    send(a, "use the staging database", ENTER)  # during the first call
    a.wait_text("steering ① use the staging database")
    send(a, "then summarise the logs", CTRL_G)
    a.wait_text("follow-up ② then summarise the logs")
    assert len(server.chat_bodies) == 1  # the first call still runs
    open_gate(workspace, 1)

    requests(server, 2)
    second = messages(server, 1)
    assert second[-2]["role"] == "tool" and "passed 1" in second[-2]["content"]
    assert second[-1] == {"role": "user", "content": "use the staging database"}
    a.wait_text("you ↪ steering")
    open_gate(workspace, 2)
    open_gate(workspace, 3)

    requests(server, 5)  # the follow-up, as a prompt of its own, after the turn
    assert messages(server, 4)[-1] == {"role": "user", "content": "then summarise the logs"}
    assert sum(m["content"] == "use the staging database" for m in messages(server, 4)) == 1
    a.wait_text("the follow-up is answered")
    screen = a.screen_text
    # In the transcript the steer stands after the first call's result, before the second.
    assert screen.index("passed 1") < screen.index("you ↪ steering") < screen.index("passed 2")


def test_kill_9_with_input_waiting_then_resume_lists_it_and_runs_nothing_unasked(
    world: World,
) -> None:
    server = world.server(demo=False)
    server.enqueue(gated(1))
    a = start_in_tmux(world, "alpha", server, args=("--yes",), size=(60, 15))
    workspace = a.workspace
    a.submit("a long step")
    requests(server, 1)
    a.wait_text("Enter steer")
    send(a, "steer me", ENTER)
    send(a, "after that", CTRL_G)
    wait_until(
        lambda: (
            pending_saved(world, workspace) == [("steer", "steer me"), ("follow-up", "after that")]
        ),
        what="both waiting inputs saved",
    )
    os.kill(a.pid, signal.SIGKILL)
    a.wait_exit()
    open_gate(workspace, 1)  # the orphaned command ends

    asked = len(server.chat_bodies)
    server.enqueue(Turn.text("steered at last"), Turn.text("followed up"))
    b = start_in_tmux(
        world,
        "alpha",
        server,
        args=("--yes", "--resume", session_id(world, workspace)),
        size=(60, 15),
    )
    b.wait_text("2 inputs were waiting")
    b.wait_text("steering (held)")
    b.submit("/queue")
    b.wait_text("1. steering (held): steer me")
    b.wait_text("2. follow-up (held): after that")
    assert len(server.chat_bodies) == asked  # nothing ran unasked

    b.submit("/queue resume")
    requests(server, asked + 2)
    assert messages(server, asked)[-1] == {"role": "user", "content": "steer me"}
    assert messages(server, asked + 1)[-1] == {"role": "user", "content": "after that"}
    b.wait_text("followed up")
    wait_until(lambda: pending_saved(world, workspace) == [], what="the queue saved empty")


def test_escape_holds_the_waiting_input_until_queue_resume(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.stall(before="thinking hard"))
    a = start_in_tmux(world, "alpha", server, size=(60, 15))
    a.submit("think")
    a.wait_text("thinking hard")
    send(a, "steer it", ENTER)
    a.wait_text("steering ① steer it")
    a.send_hex(ESCAPE)
    a.wait_text("held · /queue resume")
    a.wait_state("ready")
    assert len(server.chat_bodies) == 1
    server.enqueue(Turn.text("resumed and answered"))
    a.submit("/queue resume")
    a.wait_text("resumed and answered")
    assert messages(server, 1)[-1] == {"role": "user", "content": "steer it"}
    assert to_hex("\x07") == CTRL_G
