"""Who may speak as a sender: message ids belong to their sender, and only the sender's
own process (or a descendant in its session) may connect as it."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys

import pytest

from tests.relay.wire import ack_of, enqueue_obj, frame, read_all, send_json

pytestmark = pytest.mark.timeout(60)


def refusals(caplog, receiver) -> list[str]:
    """The refusals logged so far (the listener process's lines reach this process's log
    through its event channel: synced first)."""
    assert receiver.listener is not None and receiver.listener.sync()
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "zcoder.relay.listener" and r.getMessage().startswith("relay refused")
    ]


def test_a_message_id_belongs_to_its_sender(make_relay, caplog):
    caplog.set_level(logging.INFO, logger="zcoder.relay")
    receiver = make_relay("receiver")
    alpha = make_relay("alpha")
    beta = make_relay("beta")  # registered and live: only its id prefix is wrong
    taken = f"{alpha.instance_id}-7"
    forged = enqueue_obj(receiver, beta, "x", message_id=taken)
    ack = send_json(receiver.socket_path, forged)
    assert (ack["status"], ack["message_id"]) == ("invalid", taken)
    assert receiver.claim_one() is None  # nothing stored
    assert refusals(caplog, receiver) == [
        f"relay refused enqueue: status=invalid message_id='{taken}' "
        f"sender_instance_id='{beta.instance_id}' peer_pid={os.getpid()} "
        "reason: message_id does not begin with sender_instance_id"
    ]

    # The id was not taken: its owner's message with it is accepted, not a duplicate.
    ack = send_json(receiver.socket_path, enqueue_obj(receiver, alpha, "7"))
    assert (ack["status"], ack["message_id"]) == ("accepted", taken)
    claimed = receiver.claim_one()
    assert claimed is not None and claimed.envelope.sender_instance_id == alpha.instance_id


def test_our_own_sender_uses_ids_of_its_own(make_relay):
    receiver = make_relay("receiver")
    alpha = make_relay("alpha")
    first = alpha.send(receiver.instance_id, "one")
    second = alpha.send(receiver.instance_id, "two")
    assert (first.status, second.status) == ("accepted", "accepted")
    assert (first.message_id, second.message_id) == (
        f"{alpha.instance_id}-1",
        f"{alpha.instance_id}-2",
    )


# Sends one framed request (argv[2]) to the socket argv[1]; prints its pid and the status.
SEND = """
import os, sys
from pathlib import Path
from zcoder.relay.client import request
ack = request(Path(sys.argv[1]), sys.argv[2].encode(), timeout=10, max_bytes=65536)
print(os.getpid(), ack.status)
"""


def _send_from_child(receiver, obj, *, new_session=False, subshell=False) -> tuple[int, str]:
    payload = json.dumps(obj, separators=(",", ":"))
    argv = [sys.executable, "-c", SEND, str(receiver.socket_path), payload]
    if subshell:  # as zcoder.zsh sends: from a ( ... ) subshell of its own shell
        argv = ["bash", "-c", '( "$@" ); exit $?', "bash", *argv]
    done = subprocess.run(
        argv,
        check=False,
        capture_output=True,
        text=True,
        start_new_session=new_session,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    pid, status = done.stdout.split()
    return int(pid), status


@pytest.mark.parametrize("subshell", [False, True], ids=["child", "subshell"])
def test_a_process_in_the_senders_session_may_send_as_it(make_relay, subshell):
    receiver = make_relay("receiver")
    sender = make_relay("sender")  # this process is the sender
    obj = enqueue_obj(receiver, sender, "same-session")
    assert _send_from_child(receiver, obj, subshell=subshell)[1] == "accepted"
    claimed = receiver.claim_one()
    assert claimed is not None and claimed.envelope.message_id == obj["message_id"]


def test_a_descendant_in_a_new_session_may_not_send_as_the_sender(make_relay, caplog):
    # What a command run by zcoder is: run_command starts bash with setsid.
    caplog.set_level(logging.INFO, logger="zcoder.relay")
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    obj = enqueue_obj(receiver, sender, "setsid")
    pid, status = _send_from_child(receiver, obj, new_session=True)
    assert status == "invalid"
    assert receiver.claim_one() is None
    assert refusals(caplog, receiver) == [
        f"relay refused enqueue: status=invalid message_id='{obj['message_id']}' "
        f"sender_instance_id='{sender.instance_id}' peer_pid={pid} "
        "reason: the connecting process is not the sender or its descendant in its session"
    ]
    # The same message from the sender itself is still accepted: nothing was recorded.
    assert send_json(receiver.socket_path, obj)["status"] == "accepted"


# Connects to argv[1], hands the connected socket to its parent over fd argv[2], exits.
CONNECT_AND_EXIT = """
import socket, sys
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(sys.argv[1])
socket.send_fds(socket.socket(fileno=int(sys.argv[2])), [b"x"], [conn.fileno()])
"""


def test_a_peer_that_exited_before_the_check_is_refused(make_relay):
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    ours, theirs = socket.socketpair()
    with ours, theirs:
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                CONNECT_AND_EXIT,
                str(receiver.socket_path),
                str(theirs.fileno()),
            ],
            pass_fds=(theirs.fileno(),),
        )
        try:
            _msg, fds, _flags, _addr = socket.recv_fds(ours, 1, 1)
            # The child connected (the kernel recorded its pid) and exited; it is a zombie.
            os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
            with socket.socket(fileno=fds[0]) as conn:
                obj = enqueue_obj(receiver, sender, "exited")
                conn.sendall(frame(json.dumps(obj).encode()))
                ack = ack_of(read_all(conn))
        finally:
            child.wait(timeout=30)
    assert (ack["status"], ack["message_id"]) == ("invalid", obj["message_id"])
    assert receiver.claim_one() is None


def test_a_pid_no_kernel_has_is_refused_not_dropped(make_relay):
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    huge = 10**30
    obj = enqueue_obj(receiver, sender, "x")
    obj.update(sender_pid=huge, sender_instance_id=f"{huge}-1", message_id=f"{huge}-1-1")
    assert send_json(receiver.socket_path, obj)["status"] == "invalid"


def test_a_refusal_is_logged_with_what_was_sent_escaped_and_bounded(make_relay, caplog):
    caplog.set_level(logging.INFO, logger="zcoder.relay")
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    obj = enqueue_obj(receiver, sender, "x")
    obj.update(message_id="\x1b]0;PWN\x07" + "m" * 5000, sender_instance_id="\x1b[31m\n" * 2000)
    assert send_json(receiver.socket_path, obj)["status"] == "invalid"
    (line,) = refusals(caplog, receiver)
    assert "\x1b" not in line and "\n" not in line
    assert "message_id='\\e]0;PWN\\x07mmm" in line
    assert "sender_instance_id='\\e[31m\\n\\e[31m" in line
    assert line.endswith("reason: message_id does not match its grammar")
    assert len(line) < 2000


def test_refused_enqueues_are_logged_and_accepted_ones_are_not(make_relay, caplog):
    caplog.set_level(logging.INFO, logger="zcoder.relay")
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    assert send_json(receiver.socket_path, enqueue_obj(receiver, sender, "ok"))["status"] == (
        "accepted"
    )
    assert refusals(caplog, receiver) == []
    receiver.pause()
    assert send_json(receiver.socket_path, enqueue_obj(receiver, sender, "p"))["status"] == (
        "paused"
    )
    (line,) = refusals(caplog, receiver)
    assert "status=paused" in line
    assert line.endswith("reason: paused")
