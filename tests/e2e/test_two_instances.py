"""Two real zcoder processes in pseudo-terminals, talking over the relay.

Each test has its own registry, homes, runtime directories, workspaces and fake Ollama
servers (one per instance, so scripted turns never interleave). What a test asserts comes
from the registry, the fake Ollama's recorded requests and the session store; the screen
is only checked for short fragments.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import RelayedFactory
from tests.e2e.harness import World, wait_until
from tests.fixtures.fake_ollama import Turn
from tests.fixtures.model_requests import relay_records
from zcoder.sessions import DEFAULT_TITLE, SessionStore
from zcoder.tui.parts.relay_ui import RELAY_POLL_SECONDS

pytestmark = pytest.mark.timeout(60)

NO_PEERS = "No other local zcoder instances are available."
TASK = "users.name was renamed to users.display_name"


@contextlib.contextmanager
def registry_watch(world: World) -> Iterator[set[str]]:
    """Every name that appears in the registry while the block runs, however briefly."""
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(p.name for p in world.registry.iterdir())
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield seen
    finally:
        done.set()
        watcher.join()
        seen.update(p.name for p in world.registry.iterdir())


def test_list_agents_shows_the_other_instance(world: World) -> None:
    server_a = world.server()
    a, b = world.start_all(("alpha", server_a), ("beta", world.server()))
    b_id = b.instance_id
    assert b_id.startswith(f"{b.pid}-")

    mark = a.submit_and_wait("/list-agents", "INSTANCE ID", b_id, "beta")
    assert a.instance_id not in a.screen_text[mark:]  # the caller is not listed
    assert server_a.chat_bodies == []  # discovery never asks the model


def test_model_sends_a_task_after_the_user_confirms(world: World) -> None:
    server_a, server_b = world.server(), world.server()
    a, b = world.start_all(("alpha", server_a), ("beta", server_b))

    mark_a, mark_b = a.mark(), b.mark()
    a.submit(f"Tell the beta agent that {TASK}")
    a.wait_text("Send this message to another zcoder agent?", since=mark_a)
    a.wait_text(b.instance_id, since=mark_a)
    assert relay_records(server_b.chat_bodies) == []  # nothing is sent before the user says so
    a.answer_dialog("y", since=mark_a)
    a.wait_text("Message accepted by beta", since=mark_a)

    b.wait_text("relayed task from alpha", since=mark_b)
    b.wait_text("Relayed task received", since=mark_b)
    # A's model saw the listing, then the send result (its third request).
    bodies_a = wait_until(lambda: server_a.chat_bodies[2:], what="alpha's last request")
    tool_results = [m for m in bodies_a[0]["messages"] if m["role"] == "tool"]
    assert [m.get("tool_name") for m in tool_results] == ["list_agents", "send_agent_message"]
    listing = tool_results[0]["content"].splitlines()
    assert listing[0] == "Peers (details are self-reported by each instance):"
    # What beta is doing follows its state, briefly (the manifest's activity).
    assert re.fullmatch(
        rf"beta — pid {b.pid}, ready \(idle for \d+[smhd]\), id {re.escape(b.instance_id)}",
        listing[1],
    ), listing[1]
    assert tool_results[1]["content"].startswith(f"Message accepted by beta ({b.instance_id})")
    (record,) = relay_records(server_b.chat_bodies)
    assert f"Sender: alpha (pid {a.pid})" in record
    assert f"Sender instance: {a.instance_id}" in record
    assert f"Sender workspace: {a.workspace}" in record
    assert f"Task:\n{TASK}\n</agent_relay>" in record


def test_messages_to_a_busy_instance_queue_and_run_in_order(relayed_beta: RelayedFactory) -> None:
    b, server_b, sender = relayed_beta()
    long_reply = " ".join(f"word{i}" for i in range(12))
    server_b.enqueue(
        Turn.text(long_reply, delay=0.4),  # about five seconds
        Turn.text("first done"),
        Turn.text("second done"),
        Turn.text("third done"),
    )

    mark = b.mark()
    b.submit("write a long answer")
    b.wait_state("busy")
    results = [sender.send(b.instance_id, f"task number {n}") for n in (1, 2, 3)]
    assert [r.status for r in results] == ["accepted"] * 3, [r.text for r in results]
    for n, result in enumerate(results, start=1):
        assert f"queued at position {n}." in result.text
    b.wait_text("3 queued", since=mark)  # the header's count
    assert len(server_b.chat_bodies) == 1  # the long turn was still running

    wait_until(lambda: server_b.pending == 0, timeout=20, what="all of beta's turns")
    b.wait_text("third done")
    bodies = server_b.chat_bodies
    assert len(bodies) == 4
    assert bodies[0]["messages"][-1]["content"] == "write a long answer"
    tasks = [record.split("Task:\n", 1)[1] for record in relay_records(bodies[1:])]
    assert tasks == [f"task number {n}\n</agent_relay>" for n in (1, 2, 3)]
    b.wait_state("ready")


def test_pause_refuses_and_resume_accepts(relayed_beta: RelayedFactory) -> None:
    b, server_b, sender = relayed_beta(demo=True)

    b.submit_and_wait("/agents pause", "Relay paused")
    b.wait_state("paused")
    paused = sender.send(b.instance_id, "while paused")
    assert paused.status == "paused"
    assert paused.text == "beta is paused and did not accept the message"

    mark = b.submit_and_wait("/agents resume", "Relay resumed")
    b.wait_state("ready")
    resumed = sender.send(b.instance_id, "after resume")
    assert resumed.status == "accepted", resumed.text
    b.wait_text("relayed task from gamma", since=mark)
    wait_until(lambda: relay_records(server_b.chat_bodies), what="beta's relayed turn")
    (record,) = relay_records(server_b.chat_bodies)
    assert "after resume" in record and "while paused" not in record


def test_pause_holds_queued_messages_until_resume(relayed_beta: RelayedFactory) -> None:
    b, server_b, sender = relayed_beta()
    server_b.enqueue(Turn.text("a b c d e f g h", delay=0.4), Turn.text("the queued task ran"))

    b.submit("a long local turn")
    b.wait_state("busy")
    assert sender.send(b.instance_id, "queued before the pause").status == "accepted"
    mark = b.mark()
    b.submit("/agents pause")  # slash commands work while a turn runs
    b.wait_text("Relay paused", since=mark)
    b.wait_state("paused")
    b.wait_text("a b c d e f g h")  # the local turn is over
    b.wait_state("paused")
    time.sleep(RELAY_POLL_SECONDS * 2.5)  # the app polls the queue, and stays idle
    assert len(server_b.chat_bodies) == 1
    assert b.spool_counts() == {"inbox": 1, "processing": 0, "held": 0, "done": 0, "rejected": 0}

    b.submit("/agents resume")
    b.wait_text("the queued task ran", since=mark)
    (record,) = relay_records(server_b.chat_bodies)
    assert "queued before the pause" in record


def test_relay_event_is_saved_and_shown_on_resume(
    world: World, relayed_beta: RelayedFactory
) -> None:
    b, server_b, sender = relayed_beta(demo=True)
    session_id = b.wait_manifest()["session_id"]
    assert session_id

    result = sender.send(b.instance_id, TASK)
    assert result.status == "accepted", result.text
    b.wait_text("Relayed task received")
    b.wait_state("ready")  # the turn has ended and been saved
    assert b.quit() == 0

    with SessionStore(world.home("beta")) as store:
        (info,) = store.list_sessions(b.workspace, "coding")
        assert info.id == session_id
        assert info.title == DEFAULT_TITLE  # a relayed turn never titles a session
        data = store.load(session_id, b.workspace, "coding")
    relay_events = [e for e in data.events if e.role == "relay"]
    assert len(relay_events) == 1
    assert relay_events[0].text == TASK
    assert relay_events[0].metadata["sender_project"] == "gamma"
    assert relay_events[0].metadata["sender_instance_id"] == sender.instance_id
    assert data.user_ledger == []  # relayed text is not what the user typed

    again = world.start("beta", server_b, args=("--resume", session_id))
    again.wait_text("relayed task from gamma")
    again.wait_text(TASK)
    assert again.wait_manifest()["session_id"] == session_id


def test_relay_off_publishes_nothing_and_prompts_still_work(world: World) -> None:
    server = world.server()
    with registry_watch(world) as seen:
        off = world.start("alpha", server, ZCODER_RELAY="off")
        off.submit("hello")
        off.wait_text("Hello from the fake Ollama demo brain")
        assert off.quit() == 0
    assert seen == set()
    assert len(server.chat_bodies) == 1
    tools = {t["function"]["name"] for t in server.chat_bodies[0].get("tools") or []}
    assert "list_agents" not in tools and "send_agent_message" not in tools


def test_one_shot_prompt_publishes_nothing(world: World) -> None:
    server = world.server()
    with registry_watch(world) as seen:
        finished = subprocess.run(
            [sys.executable, "-m", "zcoder", "--prompt", "hello"],
            cwd=world.workspace("alpha"),
            env=world.env("alpha", server),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert finished.returncode == 0, finished.stderr
    assert "Hello from the fake Ollama demo brain" in finished.stdout
    assert seen == set()
    assert len(server.chat_bodies) == 1


def test_killed_instance_is_not_listed(world: World) -> None:
    server_a = world.server()
    a, b = world.start_all(("alpha", server_a), ("beta", world.server()))
    manifest = b.manifest_path()
    assert manifest is not None

    b.signal(signal.SIGKILL)
    b.wait_exit()
    assert manifest.exists()  # a killed process cannot clean up

    a.submit_and_wait("/list-agents", NO_PEERS)
    assert server_a.chat_bodies == []


@pytest.mark.parametrize("how", ["ctrl+q", "SIGTERM", "SIGHUP"])
def test_clean_shutdown_removes_manifest_and_socket(world: World, how: str) -> None:
    a = world.start("alpha", world.server())
    instance_id = a.instance_id
    manifest = world.registry / f"a-{instance_id}.json"
    sock = world.registry / f"a-{instance_id}.sock"
    assert manifest.is_file() and sock.is_socket()

    if how == "ctrl+q":
        a.send_key("\x11")
    else:
        a.signal(getattr(signal, how))
    assert a.wait_exit() is not None  # it exited by itself, not killed by the signal
    assert not manifest.exists()
    assert not sock.exists()
    assert a.relay_files() == []  # the lock file too
