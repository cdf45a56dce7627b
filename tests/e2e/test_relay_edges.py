"""More of the relay between real zcoder processes: replies, refusals, Escape, shutdown."""

from __future__ import annotations

import os
import re
import signal
import socket
from pathlib import Path

import pytest

from tests.e2e.conftest import RelayedFactory, SenderFactory
from tests.e2e.harness import World, wait_until
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.hostile_text import ALL_TOKENS, INVISIBLES, hostile
from tests.fixtures.model_requests import relay_records, tool_results
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(60)

CONFIRM = "Send this message to another zcoder agent?"


def test_relayed_turn_may_reply_only_to_its_sender(
    world: World, sender_relay: SenderFactory
) -> None:
    server_a, server_b = world.server(), world.server(demo=False)
    a, b = world.start_all(("alpha", server_a), ("beta", server_b))
    third = sender_relay("gamma")  # a live peer beta must not forward to
    server_b.enqueue(
        Turn.tool_calls(
            call("send_agent_message", {"target_instance_id": third.instance_id, "message": "fw"})
        ),
        Turn.tool_calls(call("send_agent_message", {"target": a.instance_id, "message": "which?"})),
        Turn.text("asked alpha"),
    )

    mark_a, mark_b = a.mark(), b.mark()
    a.submit("Tell the beta agent that a column was renamed")
    a.wait_text(CONFIRM, since=mark_a)
    a.answer_dialog("y", since=mark_a)
    b.wait_text("relayed task from alpha", since=mark_b)
    b.wait_text(CONFIRM, since=mark_b)  # the reply is confirmed by beta's user too
    b.answer_dialog("y", since=mark_b)
    b.wait_text("asked alpha", since=mark_b)
    a.wait_text("relayed task from beta", since=mark_a)

    first, second, third_request = server_b.chat_bodies[:3]
    send_schema = next(t for t in first["tools"] if t["function"]["name"] == "send_agent_message")
    target = send_schema["function"]["parameters"]["properties"]["target_instance_id"]
    assert target["enum"] == [a.instance_id]  # the schema names the sender only
    assert f"'{third.instance_id}' was refused" in tool_results(second)[-1]
    assert tool_results(third_request)[-1].startswith(
        f"Message accepted by alpha ({a.instance_id})"
    )
    wait_until(lambda: relay_records(server_a.chat_bodies), what="alpha's relayed turn")
    (record,) = relay_records(server_a.chat_bodies)
    assert f"Sender instance: {b.instance_id}" in record and "which?" in record


def test_declined_send_delivers_nothing(world: World) -> None:
    server_a, server_b = world.server(), world.server()
    a, b = world.start_all(("alpha", server_a), ("beta", server_b))

    mark = a.submit_and_wait("Tell the beta agent that nothing should happen", CONFIRM)
    a.answer_dialog("n", since=mark)
    a.wait_text("the user declined", since=mark)
    bodies = wait_until(lambda: server_a.chat_bodies[2:], what="alpha's last request")
    assert tool_results(bodies[0])[-1].startswith("Error: the user declined to send")
    assert relay_records(server_b.chat_bodies) == []
    assert b.manifest() is not None and server_b.chat_bodies == []


def test_escape_stops_a_relayed_turn_and_the_queue_goes_on(relayed_beta: RelayedFactory) -> None:
    b, server_b, sender = relayed_beta(demo=True)  # the demo brain answers the second task
    server_b.enqueue(Turn.stall(before="working on the first", seconds=30))

    mark = b.mark()
    assert sender.send(b.instance_id, "first task").status == "accepted"
    b.wait_text("working on the first", since=mark)
    assert sender.send(b.instance_id, "second task").status == "accepted"
    b.send_key("\x1b")
    assert server_b.wait_for_disconnect(10.0)  # the model request was closed
    b.wait_text("Relayed task received: second task", since=mark)
    tasks = [r.split("Task:\n", 1)[1] for r in relay_records(server_b.chat_bodies)]
    assert [t.splitlines()[0] for t in tasks] == ["first task", "second task"]
    b.wait_state("ready")
    # Both were completed, the stopped one too: nothing is left queued or half-claimed.
    expected = {"inbox": 0, "processing": 0, "held": 0, "done": 2, "rejected": 0}
    wait_until(lambda: b.spool_counts() == expected, what="beta's spool to settle")


def test_relayed_turn_asks_for_every_command(world: World, relayed_beta: RelayedFactory) -> None:
    b, server, sender = relayed_beta()
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": "echo local-one"})),
        Turn.text("first local turn done"),
        Turn.tool_calls(call("run_command", {"command": "echo local-two"})),
        Turn.text("second local turn done"),
        Turn.tool_calls(call("run_command", {"command": "echo relayed-one"})),
        Turn.text("relayed turn done"),
        Turn.tool_calls(call("run_command", {"command": "echo local-three"})),
        Turn.text("third local turn done"),
    )

    mark = b.submit_and_wait("run one", "Run this command?")
    b.answer_dialog("a", since=mark)  # allow commands for the rest of this process
    b.wait_text("first local turn done", since=mark)
    mark = b.submit_and_wait("run two", "second local turn done")
    assert "Run this command?" not in b.screen_text[mark:]  # the grant applied

    mark = b.mark()
    assert sender.send(b.instance_id, "please run something").status == "accepted"
    b.wait_text("Run this command?", since=mark)  # the grant does not apply to a relay
    b.wait_text("a relayed task asks each time", since=mark)
    b.answer_dialog("a", since=mark)  # approves this one command only
    b.wait_text("relayed turn done", since=mark)
    bodies = server.chat_bodies
    assert len(bodies) == 6
    assert tool_results(bodies[5])[-1].startswith("relayed-one")
    b.wait_state("ready")

    # The relayed text is in the conversation now: the old grant is gone, so a local
    # turn that it might steer asks again.
    mark = b.submit_and_wait("run three", "Run this command?")
    b.answer_dialog("y", since=mark)
    b.wait_text("third local turn done", since=mark)
    b.wait_state("ready")
    with SessionStore(world.home("beta")) as store:
        (info,) = store.list_sessions(b.workspace, "coding")
        events = store.load(info.id, b.workspace, "coding").events
    approvals = [
        (e.metadata["command"], e.metadata["approval"]) for e in events if e.role == "tool"
    ]
    # The relayed task ended the grant and said so (saved; on screen the dialog may
    # cover it at once).
    assert any(e.role == "system" and "no longer applies" in e.text for e in events)
    assert approvals == [
        ("echo local-one", "approved for this process (a)"),
        ("echo local-two", "allowed for this process (a)"),
        ("echo relayed-one", "approved once"),  # asked, and `a` did not count
        ("echo local-three", "approved once"),  # asked again after the relayed turn
    ]


def test_equal_basenames_stay_distinguishable(world: World) -> None:
    # Ollama is not even reachable: /list-agents never needs it.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    a = world.start("x/proj", None, wait=False, OLLAMA_HOST=dead)
    b = world.start("y/proj", None, wait=False, OLLAMA_HOST=dead, ZCODER_RELAY="paused")
    a.wait_ready()
    b.wait_ready()

    mark = a.mark()
    a.submit("/list-agents")
    row = (
        rf"proj +{b.pid} +paused +(?:idle for \d+[smhd] +)?(?:\d+ +)?{re.escape(b.instance_id)}"
        rf" +{re.escape(str(b.workspace))}"
    )
    a.wait_text(re.compile(row), since=mark)
    assert str(world.root / "x" / "proj") not in a.screen_text[mark:].split("INSTANCE ID")[-1]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


def test_sigterm_during_a_command_leaves_no_process(world: World) -> None:
    server = world.server(demo=False)
    marker = f"sleep 3{os.getpid() % 1000}.25"
    server.enqueue(Turn.tool_calls(call("run_command", {"command": marker})), Turn.text("done"))
    a = world.start("alpha", server, args=("--yes",))
    files = a.relay_files()

    a.submit("run the command")
    wait_until(lambda: _processes_with(marker), what="the command to run")
    a.signal(signal.SIGTERM)
    assert a.wait_exit() == 128 + signal.SIGTERM
    try:
        wait_until(lambda: not _processes_with(marker), timeout=5, what="the command to end")
    finally:
        for pid in _processes_with(marker):
            os.kill(pid, signal.SIGKILL)
    assert not any(path.exists() for path in files)


def test_escape_sequences_from_peers_and_the_model_never_reach_the_terminal(
    world: World, sender_relay: SenderFactory
) -> None:
    # A peer's project name, a relayed body and a model reply, each with an OSC title
    # sequence and a cursor move that nothing in zcoder or Textual would send itself.
    evil_dir = "ev\x1b]0;NAMEPWN\x07il"
    server_a, server_b = world.server(), world.server(demo=False)
    a, b = world.start_all(("alpha", server_a), (evil_dir, server_b))
    sender = sender_relay("gamma")
    server_b.enqueue(Turn.text("reply \x1b]0;MODELPWN\x07 \x1b[77;1H moved, done"))

    mark = b.mark()
    body = "body \x1b]0;BODYPWN\x1b\\ \x1b[77;1H end"
    assert sender.send(b.instance_id, body).status == "accepted"
    b.wait_text("moved, done", since=mark)
    b.wait_text("body \\e]0;BODYPWN\\e\\ \\e[77;1H end", since=mark)  # shown, not obeyed
    a.submit_and_wait("/list-agents", "ev\\e]0;NAMEPWN\\x07il")

    for instance in (a, b):
        raw = instance.raw_output
        for needle in ("\x1b]0;NAMEPWN", "\x1b]0;BODYPWN", "\x1b]0;MODELPWN", "\x1b[77;1H"):
            assert needle not in raw, (instance.name, needle)
    # The model is given the body with its controls as readable escapes, as the screen
    # shows it: no ESC or BEL reaches its record (issue 18 item 7).
    (record,) = relay_records(server_b.chat_bodies)
    assert "body \\e]0;BODYPWN\\e\\ \\e[77;1H end" in record
    assert "\x1b" not in record and "\x07" not in record


def test_model_picker_shows_names_literally_and_switches(world: World) -> None:
    evil = "ev[bold]il\x1b]0;OPTPWN\x07"
    server = world.server(models=("qwen3-coder", evil))
    a = world.start("alpha", server)

    mark = a.mark()
    a.send_key("\x0f")  # Ctrl+O
    a.wait_text("Choose a model", since=mark)
    a.wait_text("ev[bold]il\\e]0;OPTPWN\\x07", since=mark)  # neither markup nor a sequence
    a.send_key("\x1b[B")  # Down
    a.send_key("\r")
    wait_until(lambda: (a.manifest() or {}).get("model") == evil, what="the new model")
    a.wait_text(f"Model: {evil[:10]}", since=mark)
    assert "\x1b]0;OPTPWN" not in a.raw_output


def test_approval_dialog_shows_an_escape_laden_command_literally(world: World) -> None:
    # printf's \033 escapes stay text in the command; its output carries real ESC bytes.
    command = "printf 'ok \\033]0;OUTPWN\\007\\n' # \x1b[8mhidden\x1b]0;CMDPWN\x07"
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": command})), Turn.text("all finished here")
    )
    a = world.start("alpha", server)

    mark = a.submit_and_wait("run it", "Run this command?")
    a.wait_text("# \\e[8mhidden\\e]0;CMDPWN\\x07", since=mark)  # all of it, visibly
    a.answer_dialog("y", since=mark)
    a.wait_text("all finished here", since=mark)
    a.wait_text("ok \\e]0;OUTPWN", since=mark)  # the output, made visible too
    raw = a.raw_output
    assert "\x1b[8mhidden" not in raw and "\x1b]0;CMDPWN" not in raw and "\x1b]0;OUTPWN" not in raw


def test_relayed_control_tokens_are_defused_and_invisibles_shown_as_escapes(
    relayed_beta: RelayedFactory,
) -> None:
    # The sender's workspace (its name, made a usable name, is what it is called by) and the
    # body carry chat-template tokens of every family and invisible characters: the model
    # gets them defused and escaped, the screen shows the escapes, and no invisible
    # character is ever written to the terminal.
    b, server, sender = relayed_beta(sender="gam<|im_start|>ma\u200b<think>")
    server.enqueue(Turn.text("hostile task handled"))

    mark = b.mark()
    body = hostile("check\u200bthis\u2060now ")
    assert sender.send(b.instance_id, body).status == "accepted"
    b.wait_text("hostile task handled", since=mark)
    b.wait_text("gam<|im_start|>ma\\u200b<think>", since=mark)  # the workspace
    b.wait_text("check\\u200bthis\\u2060now <|im_start|>", since=mark)

    (record,) = relay_records(server.chat_bodies)
    assert [token for token in ALL_TOKENS if token in record] == []
    assert [char for char in INVISIBLES if char in record] == []
    assert "/gam‹|im_start|>ma\\u200b‹think>\n" in record  # the workspace line
    assert "Task:\ncheck\\u200bthis\\u2060now ‹|im_start|> ‹|im_end|>" in record
    assert "［INST] ［/INST] ‹<SYS>> ‹</SYS>> ‹s> ‹/s>" in record
    raw = b.raw_output
    assert [char for char in INVISIBLES if char in raw] == []
