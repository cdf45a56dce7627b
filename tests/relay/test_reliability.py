"""Faults from outside: killed peers, killed senders, a full disk, many instances at once.

Mutated frames are in test_fuzz.py and spool entries replaced before a claim in
test_queue.py; they are not repeated here.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench.fail_closed import run as run_fail_closed
from bench.harness import workspace

from tests.relay.wire import connect, enqueue_obj, frame, ping_obj, read_all, send_json
from zcoder.relay import ClaimedMessage

pytestmark = pytest.mark.timeout(120)


def _payload(obj: dict[str, object]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def test_sender_mid_frame_gets_eof_or_reset_when_the_receiver_is_killed(make_peer, make_relay):
    beta = make_peer("beta")
    sender = make_relay("sender")
    raw = frame(
        _payload(enqueue_obj(sender, sender, "half-1", target_instance_id=beta.instance_id))
    )
    with connect(beta.socket, timeout=5) as sock:
        sock.sendall(raw[: len(raw) // 2])
        time.sleep(0.1)  # let the listener take the connection and read the half
        os.kill(beta.proc.pid, signal.SIGKILL)
        beta.proc.wait(timeout=10)
        started = time.monotonic()
        response = read_all(sock, timeout=5)  # raises on a hang instead of returning
        elapsed = time.monotonic() - started
        assert response == b""
        assert elapsed < 1.0
        with pytest.raises(OSError) as failure:
            for _ in range(4):  # the first write may still land in the socket buffer
                sock.sendall(raw[len(raw) // 2 :])
                time.sleep(0.05)
        assert failure.value.errno in (errno.EPIPE, errno.ECONNRESET)


def test_send_to_a_peer_killed_after_discovery_fails_clearly_within_the_deadline(
    make_peer, make_relay, monkeypatch
):
    alpha = make_relay("alpha")
    beta = make_peer("beta")
    found = alpha.discover()
    assert [p.instance_id for p in found.peers] == [beta.instance_id]
    beta.kill()
    # The peer died between the sender's discovery and its delivery.
    monkeypatch.setattr(alpha, "discover", lambda: found)
    started = time.monotonic()
    result = alpha.send(beta.instance_id, "hello")
    elapsed = time.monotonic() - started
    assert result.status is None and not result.accepted
    assert result.text.startswith("delivery to beta failed: cannot connect")
    assert elapsed < alpha.settings.io_timeout
    monkeypatch.undo()
    started = time.monotonic()
    again = alpha.send(beta.instance_id, "hello")
    assert again.status is None and "no live zcoder instance" in again.text
    assert time.monotonic() - started < alpha.settings.io_timeout


_WRITE_THEN_HANG = r"""
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.stdin.buffer.read())
print("written", flush=True)
time.sleep(60)
"""


def _write_then_die(receiver, obj, *, wait_for_decision: bool) -> None:
    """A child of this process writes the whole request, then is SIGKILLed unread."""
    assert receiver.listener is not None
    served = receiver.listener.served
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITE_THEN_HANG, str(receiver.socket_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(frame(_payload(obj)))
        child.stdin.close()
        assert child.stdout.readline() == b"written\n"
        deadline = time.monotonic() + 5
        while wait_for_decision and receiver.listener.served == served:
            assert time.monotonic() < deadline, "the receiver never decided"
            time.sleep(0.005)
    finally:
        child.kill()
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    deadline = time.monotonic() + 5
    while receiver.listener.served == served:  # the decision, or EOF, after the kill
        assert time.monotonic() < deadline, "the receiver never answered"
        time.sleep(0.005)


def test_sender_killed_after_writing_before_reading_leaves_one_stored_message(make_relay):
    receiver = make_relay("receiver")
    sender = make_relay("sender")  # this process: the child writing for it is a descendant
    assert receiver.listener is not None
    obj = enqueue_obj(receiver, sender, "killed-sender-1")
    _write_then_die(receiver, obj, wait_for_decision=True)
    assert send_json(receiver.socket_path, ping_obj(receiver))["status"] == "pong"
    assert receiver.listener.alive
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert claimed.envelope.message_id == obj["message_id"]
    assert receiver.claim_one() is None  # stored once
    assert send_json(receiver.socket_path, obj)["status"] == "duplicate"


def test_sender_killed_racing_the_decision_is_stored_at_most_once(make_relay, relay_env):
    # Killed before the receiver decides, the writer can no longer be shown to descend
    # from the sender (rule 8 fails closed: invalid); killed after, it was stored. Never twice.
    env = {**relay_env, "ZCODER_RELAY_MAX_QUEUE": "64"}
    receiver = make_relay("receiver", env=env)
    sender = make_relay("sender", env=env)
    for n in range(8):
        _write_then_die(
            receiver, enqueue_obj(receiver, sender, f"race-kill-{n}"), wait_for_decision=False
        )
    assert send_json(receiver.socket_path, ping_obj(receiver))["status"] == "pong"
    ids = []
    while (claimed := receiver.claim_one()) is not None:
        assert isinstance(claimed, ClaimedMessage)
        ids.append(claimed.envelope.message_id)
    assert len(ids) == len(set(ids)) <= 8


def _fill(directory) -> None:
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)


def test_disk_full_while_storing_answers_invalid_and_leaves_no_half_file(make_relay, short_dir):
    mount_point = short_dir / "small"
    mount_point.mkdir(mode=0o700)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    receiver = None
    try:
        receiver = make_relay("receiver", runtime_dir=mount_point)
        sender = make_relay("sender")
        assert receiver.available and receiver.spool is not None
        inbox, tmp = receiver.spool.root / "inbox", receiver.spool.root / "tmp"
        _fill(mount_point)
        obj = enqueue_obj(receiver, sender, "full-disk-1", body="x" * 2000)
        assert send_json(receiver.socket_path, obj)["status"] == "invalid"
        assert list(inbox.iterdir()) == []
        # tmp/ holds only empty spare files, never part of a message.
        assert all(p.name.startswith("spare-") and p.stat().st_size == 0 for p in tmp.iterdir())
        (mount_point / "filler").unlink()
        ack = send_json(receiver.socket_path, obj)  # the failed store was not recorded
        assert ack["status"] == "accepted" and ack["queue_position"] == 1
        claimed = receiver.claim_one()
        assert isinstance(claimed, ClaimedMessage) and claimed.envelope.body == "x" * 2000
    finally:
        if receiver is not None:
            receiver.stop()
        subprocess.run(["umount", str(mount_point)], capture_output=True, check=False)


def test_fifty_instances_started_at_once_have_distinct_ids_and_see_each_other(make_peer):
    peers = [make_peer(f"p{n:02d}", wait=False) for n in range(50)]
    for peer in peers:
        peer.wait_ready(timeout=90)
    ids = {peer.instance_id for peer in peers}
    assert len(ids) == 50
    assert len({peer.pid for peer in peers}) == 50
    for peer in [peers[0], *random.Random(50).sample(peers[1:], 3)]:
        seen = [p["instance_id"] for p in peer.discover()]
        assert sorted(seen) == sorted(ids - {peer.instance_id})


def test_each_kind_of_bad_request_is_refused_and_nothing_accepted_is_lost():
    with workspace("zt") as space:
        result = run_fail_closed(space, 24)
    kinds = {count.kind: count for count in result.kinds}
    assert len(kinds) >= 6
    for count in kinds.values():
        assert count.tried == 24, count
        assert count.refused == count.tried, count
    assert result.control_sent > 0
    assert result.control_accepted == result.control_sent
    assert result.lost == 0


def test_an_accepted_message_is_whole_in_the_spool_when_the_receiver_is_killed(
    make_peer, make_relay, relay_env
):
    """No fsync: the rename before the ack is what makes `accepted` true, and a rename
    outlives the receiver's own crash (the design's guarantee ends with its process)."""
    beta = make_peer("beta", consume=False)
    sender = make_relay("sender")
    result = sender.send(beta.instance_id, "whole after a crash ✓\nline 2")
    assert result.status == "accepted"
    os.kill(beta.proc.pid, signal.SIGKILL)
    beta.proc.wait(timeout=10)
    runtime = relay_env["XDG_RUNTIME_DIR"]
    (stored,) = list(Path(runtime).glob(f"zcoder-{beta.pid}-*/relay/inbox/*.json"))
    assert stored.name.endswith(f"-{result.message_id}.json")
    envelope = json.loads(stored.read_text(encoding="utf-8"))
    assert envelope["body"] == "whole after a crash ✓\nline 2"
    assert envelope["message_id"] == result.message_id
