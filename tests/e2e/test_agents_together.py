"""Issue 12 with real instances in pseudo-terminals: names, receipts, the history, trust,
two agents in one workspace, crash recovery. The seed's two-terminal story ends with the
sender hearing back: "weekly-digest completed: …".
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace

import pytest

from tests.e2e.harness import World, wait_until
from tests.fixtures.fake_ollama import Turn, call

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_the_seed_story_with_names_ends_with_a_receipt_and_is_in_the_inbox(world: World) -> None:
    server_a, server_b = world.server(), world.server()
    a = world.start("app", server_a, ZCODER_AGENT_NAME="main-app")
    b = world.start("weekly-digest", server_b)  # named after its project
    assert b.wait_manifest()["name"] == "weekly-digest"
    assert a.wait_manifest()["name"] == "main-app"

    mark_a = a.mark()
    a.submit("Tell the weekly-digest agent to include the new signups in tomorrow's digest")
    a.answer_dialog("y", since=mark_a)
    a.wait_text("Message accepted by weekly-digest", since=mark_a)
    # Shown by the name it goes by (its manifest's, verified with its process), not by its
    # project's: it is a live interactive instance, proven by the kernel.
    b.wait_text("relayed task from main-app (pid")
    # B's turn ends; A hears back, without a turn of its own.
    a.wait_text("weekly-digest completed:", since=mark_a, timeout=30)
    requests_before = len(server_a.chat_bodies)
    a.submit("/inbox")
    a.wait_text("receipt: completed", since=mark_a)
    assert len(server_a.chat_bodies) == requests_before  # the receipt started nothing

    # The history outlives the process.
    assert a.quit() == 0
    again = world.start("app", server_a, ZCODER_AGENT_NAME="main-app")
    mark = again.mark()
    again.submit("/inbox")
    again.wait_text("→ weekly-digest · started · receipt: completed", since=mark)


def test_colliding_names_are_disambiguated_and_an_ambiguous_target_is_refused(
    world: World,
) -> None:
    server = world.server(demo=False)
    a = world.start("x/caller", server)
    b1 = world.start("y/twin", world.server())
    b2 = world.start("z/twin", world.server())
    mark = a.mark()
    a.submit("/list-agents")
    a.wait_text(f"twin#{b1.pid}", since=mark)
    a.wait_text(f"twin#{b2.pid}", since=mark)
    server.enqueue(
        Turn.tool_calls(call("send_agent_message", {"target": "twin", "message": "hi"})),
        Turn.text("it is ambiguous"),
    )
    a.submit("say hi to twin")
    wait_until(lambda: len(server.chat_bodies) == 2, what="the refusal to reach the model")
    result = server.chat_bodies[1]["messages"][-1]["content"]
    assert "ambiguous" in result and b1.instance_id in result and b2.instance_id in result
    assert b1.spool_counts()["inbox"] == b2.spool_counts()["inbox"] == 0


def test_hold_then_block_by_workspace(world: World, sender_relay) -> None:
    server_b = world.server(demo=False)
    b = world.start("receiver", server_b, ZCODER_RELAY_INBOUND="hold")
    sender = sender_relay("sender")
    mark = b.mark()
    assert sender.send(b.instance_id, "held task").status == "accepted"
    b.wait_text("is held for you", since=mark)
    assert server_b.chat_bodies == []
    b.submit("/agents block sender")
    b.wait_text("Block:", since=mark)
    refused = sender.send(b.instance_id, "blocked task")
    assert refused.status == "paused"
    b.submit("/agents trust sender")
    b.wait_text("Trust:", since=mark)
    server_b.enqueue(Turn.text("trusted task done"))
    assert sender.send(b.instance_id, "trusted task").status == "accepted"
    b.wait_text("trusted task done", since=mark)
    assert b.spool_counts()["held"] == 1  # the first still waits for the user


def test_an_edit_over_a_change_made_by_another_process_is_refused(world: World) -> None:
    server = world.server(demo=False)
    zc = world.start("proj", server)
    target = zc.workspace / "notes.txt"
    target.write_text("first line\n")
    server.enqueue(
        Turn.tool_calls(call("read_file", {"path": "notes.txt"})),
        # The edit comes a moment after the read's result arrives: time for another process
        # to change the file in between.
        replace(
            Turn.tool_calls(
                call("replace_text", {"path": "notes.txt", "old_text": "first", "new_text": "1st"})
            ),
            delay=1.5,
        ),
        Turn.text("could not"),
    )
    zc.submit("shorten the first word")
    wait_until(lambda: len(server.chat_bodies) >= 1, what="the first request")
    # Another process (an editor, another agent) changes the file while the model thinks.
    wait_until(lambda: len(server.chat_bodies) >= 2, what="the read's result")
    target.write_text("first line\nadded by the editor\n")
    wait_until(lambda: len(server.chat_bodies) >= 3, timeout=20, what="the edit's result")
    result = server.chat_bodies[2]["messages"][-1]["content"]
    assert "changed on disk since you last read" in result
    assert target.read_text() == "first line\nadded by the editor\n"


def test_after_a_crash_the_next_instance_recovers_the_unrun_messages(
    world: World, sender_relay
) -> None:
    server = world.server(demo=False)
    b = world.start("proj", server, ZCODER_RELAY_INBOUND="hold")
    sender = sender_relay("sender")
    for n in (1, 2):
        assert sender.send(b.instance_id, f"task {n}").status == "accepted"
    b.wait_text("is held for you")
    b.signal(signal.SIGKILL)
    b.wait_exit()
    # The crashed instance's lock is fresh: the next start must wait until it is older
    # than the sweep's two-second guard.
    lock = next(world.registry.glob(f"a-{b.instance_id}.lock"))
    old = time.time() - 10
    os.utime(lock, (old, old))
    server.enqueue(Turn.text("did task 1"), Turn.text("did task 2"))
    successor = world.start("proj", server)
    successor.wait_text("left 2 accepted messages")
    successor.submit("/agents recover")
    successor.wait_text("Recovered 2 messages")
    successor.wait_text("did task 2", timeout=30)
    bodies = server.chat_bodies
    assert "task 1" in bodies[0]["messages"][-1]["content"]
    assert "task 2" in bodies[1]["messages"][-1]["content"]
