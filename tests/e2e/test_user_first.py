"""The local user is never starved, and a flood waits for them: real zcoder in a pty.

Keys are typed as raw bytes (text, then a carriage return), as a terminal sends them. What
ran, and in which order, comes from the fake Ollama's recorded requests and the session
store; the screen is only checked for short fragments.
"""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import RelayedFactory
from tests.e2e.harness import World, wait_until
from tests.fixtures.fake_ollama import Turn
from tests.fixtures.model_requests import last_user_messages
from zcoder.sessions import SessionStore
from zcoder.tui.parts.relay_ui import RELAY_POLL_SECONDS

pytestmark = pytest.mark.timeout(90)

ESCAPE = "\x1b"
CTRL_G = "\x07"


def test_a_follow_up_queued_during_a_relayed_turn_is_held_by_escape_then_resumed(
    world: World, relayed_beta: RelayedFactory
) -> None:
    # Where a follow-up runs among relayed tasks (its mark) is tests/tui/test_scheduler.py's;
    # here: queued with Ctrl+G's byte, shown, held by Escape without holding up relayed
    # tasks, run by /queue resume, and in the transcript where it ran.
    b, server, sender = relayed_beta()
    server.enqueue(Turn.stall(before="working on task 1", seconds=30))

    mark = b.mark()
    assert sender.send(b.instance_id, "task 1").status == "accepted"
    b.wait_text("working on task 1", since=mark)
    b.send_key("my local prompt")
    b.wait_text("my local prompt", since=mark)
    b.send_key(CTRL_G)
    b.wait_text("follow-up ① my local prompt", since=mark)  # queued, not refused
    for n in (2, 3):
        assert sender.send(b.instance_id, f"task {n}").status == "accepted"
    b.wait_text("relay: busy · 2 queued", since=mark)
    server.enqueue(*(Turn.text(f"task {n} done") for n in (2, 3)))

    b.send_key(ESCAPE)  # stops task 1; the follow-up is held, the relayed tasks run
    b.wait_text("1 waiting input is held: /queue resume runs it.", since=mark)
    b.wait_text("task 3 done", since=mark)
    b.wait_state("ready")
    assert len(server.chat_bodies) == 3
    server.enqueue(Turn.text("the local prompt answered"))
    b.submit("/queue resume")
    b.wait_text("the local prompt answered", since=mark)
    assert last_user_messages(server.chat_bodies) == [
        "relay: task 1",
        "relay: task 2",
        "relay: task 3",
        "my local prompt",
    ]
    b.wait_state("ready")
    session_id = b.wait_manifest()["session_id"]
    assert b.quit() == 0

    with SessionStore(world.home("beta")) as store:
        events = store.load(session_id, b.workspace, "coding").events
    shown = [e.text for e in events if e.role in ("relay", "user")]
    # The user's turn is in the transcript where it ran, not where it was queued.
    assert shown == ["task 1", "task 2", "task 3", "my local prompt"]


def test_a_flood_runs_eight_turns_unattended_then_waits_for_agents_continue(
    relayed_beta: RelayedFactory,
) -> None:
    b, server, sender = relayed_beta()
    server.enqueue(Turn.stall(before="the local turn", seconds=30))

    mark = b.mark()
    b.submit("a local turn")  # the user's last act
    b.wait_text("the local turn", since=mark)
    results = [sender.send(b.instance_id, f"flood {n}") for n in range(1, 15)]
    assert [r.status for r in results] == ["accepted"] * 14, [r.text for r in results]
    server.enqueue(*(Turn.text(f"flood {n} done") for n in range(1, 9)))
    b.send_key(ESCAPE)

    b.wait_text("8 relayed tasks ran without you; 6 more are waiting.", since=mark)
    b.wait_text("/agents continue (or F2) runs them.", since=mark)
    b.wait_text("6 queued · waiting for you", since=mark)  # the header
    b.wait_state("ready")
    assert last_user_messages(server.chat_bodies[1:]) == [f"relay: flood {n}" for n in range(1, 9)]
    assert b.spool_counts()["inbox"] == 6  # nothing dropped, nothing claimed
    time.sleep(RELAY_POLL_SECONDS * 2.5)  # the app polls its queue, and goes on waiting
    assert len(server.chat_bodies) == 9

    # The first task to run again stalls, so the screen is still while the notice is read.
    server.enqueue(Turn.stall(before="working on flood 9", seconds=30))
    server.enqueue(*(Turn.text(f"flood {n} done") for n in range(10, 15)))
    mark = b.submit_and_wait(
        "/agents continue", "working on flood 9", "Running the 6 relayed tasks that waited for you."
    )
    b.send_key(ESCAPE)  # stops flood 9; the other five run
    wait_until(lambda: len(server.chat_bodies) == 15, what="the six waiting tasks")
    b.wait_text("flood 14 done", since=mark)
    assert last_user_messages(server.chat_bodies[1:]) == [f"relay: flood {n}" for n in range(1, 15)]
    expected = {"inbox": 0, "processing": 0, "held": 0, "done": 14, "rejected": 0}
    wait_until(lambda: b.spool_counts() == expected, what="beta's spool to settle")
