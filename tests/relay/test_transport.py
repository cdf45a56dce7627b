"""The listener over real Unix sockets: framing, deadlines, concurrency, descriptors."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.relay.wire import (
    ack_of,
    connect,
    enqueue_obj,
    exchange,
    frame,
    open_fds,
    ping_obj,
    read_all,
    send_json,
)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def pair(make_relay):
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    assert receiver.available, receiver.status().reason
    assert sender.available, sender.status().reason
    return receiver, sender


def test_ping_answers_pong_with_state(pair):
    receiver, _ = pair
    ack = send_json(receiver.socket_path, ping_obj(receiver, "ping-7-7"))
    assert ack == {
        "protocol": 1,
        "type": "ack",
        "message_id": "ping-7-7",
        "status": "pong",
        "queue_position": 0,
        "state": "ready",
    }


def test_enqueue_is_accepted_and_stored_whole(pair):
    receiver, sender = pair
    body = 'spaces  tabs\t newlines\n quotes " \\ backslash *glob?[x] — ünïcødé ✓ 🚀'
    ack = send_json(receiver.socket_path, enqueue_obj(receiver, sender, "1", body))
    assert ack["status"] == "accepted"
    assert ack["queue_position"] == 1
    claimed = receiver.claim_one()
    assert claimed is not None and not hasattr(claimed, "reason")
    assert claimed.envelope.body == body
    assert claimed.envelope.sender_instance_id == sender.instance_id


def test_header_split_across_writes_is_read(pair):
    receiver, sender = pair
    payload = json.dumps(enqueue_obj(receiver, sender, "split-1")).encode()
    raw = frame(payload)
    with connect(receiver.socket_path) as sock:
        for piece in (raw[:3], raw[3:16], raw[16:18], raw[18:40], raw[40:]):
            sock.sendall(piece)
            time.sleep(0.05)
        ack = ack_of(read_all(sock))
    assert ack["status"] == "accepted"


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"ZCODER-AGENT/1 0\n", "empty"),
        (b"GET / HTTP/1.1\r\n\r\n", "not a frame"),
        (b"ZCODER-AGENT/1 99999999\n", "oversized"),
        (b"ZCODER-AGENT/1 12x\n", "non-decimal"),
        (frame(b"{not json}"), "malformed JSON"),
        (frame(b'{"protocol":1,"nested":{"a":1}}'), "nested object"),
        (frame(b"[1,2]"), "not an object"),
        (frame(b"\xff\xff\xff"), "not UTF-8"),
    ],
)
def test_unreadable_frames_answer_invalid_with_empty_id(pair, raw, why):
    receiver, _ = pair
    ack = ack_of(exchange(receiver.socket_path, raw))
    assert (ack["status"], ack["message_id"]) == ("invalid", ""), why


def test_oversized_declared_length_answers_without_waiting_for_payload(pair):
    receiver, _ = pair
    started = time.monotonic()
    ack = ack_of(exchange(receiver.socket_path, b"ZCODER-AGENT/1 65537\n"))
    assert ack["status"] == "invalid"
    assert time.monotonic() - started < receiver.settings.io_timeout


def test_unsupported_protocol_and_type(pair):
    receiver, _ = pair
    assert (
        send_json(receiver.socket_path, {**ping_obj(receiver), "protocol": 2})["status"]
        == "unsupported"
    )
    assert (
        send_json(receiver.socket_path, {**ping_obj(receiver), "protocol": True})["status"]
        == "unsupported"
    )
    assert (
        send_json(receiver.socket_path, {**ping_obj(receiver), "protocol": "1"})["status"]
        == "unsupported"
    )
    reply = send_json(receiver.socket_path, {**ping_obj(receiver, "m-1"), "type": "broadcast"})
    assert (reply["status"], reply["message_id"]) == ("unsupported", "m-1")


def test_wrong_target_is_refused(pair):
    receiver, sender = pair
    obj = enqueue_obj(receiver, sender, "wt-1", target_instance_id=sender.instance_id)
    assert send_json(receiver.socket_path, obj)["status"] == "wrong_target"


def test_ping_with_wrong_target_is_wrong_target(pair):
    receiver, _ = pair
    obj = {**ping_obj(receiver), "target_instance_id": "1-2"}
    assert send_json(receiver.socket_path, obj)["status"] == "wrong_target"


def test_body_length_counts_code_points_not_bytes(make_relay, relay_env):
    env = {**relay_env, "ZCODER_RELAY_MAX_MESSAGE_CHARS": "10"}
    receiver = make_relay("receiver", env=env)
    sender = make_relay("sender", env=env)
    ten = "✓" * 10  # 30 bytes in UTF-8
    assert (
        send_json(receiver.socket_path, enqueue_obj(receiver, sender, "u-1", ten))["status"]
        == "accepted"
    )
    eleven = "é" * 11
    assert (
        send_json(receiver.socket_path, enqueue_obj(receiver, sender, "u-2", eleven))["status"]
        == "invalid"
    )


def test_frame_length_counts_bytes_under_multibyte_text(pair):
    receiver, sender = pair
    payload = json.dumps(
        enqueue_obj(receiver, sender, "b-1", "日本語テキスト"), ensure_ascii=False
    ).encode()
    assert len(payload) > len(payload.decode())
    ack = ack_of(exchange(receiver.socket_path, frame(payload)))
    assert ack["status"] == "accepted"
    # A header counting characters instead of bytes leaves the payload short: invalid.
    short = b"ZCODER-AGENT/1 " + str(len(payload.decode())).encode() + b"\n" + payload
    assert ack_of(exchange(receiver.socket_path, short))["status"] == "invalid"


def test_bytes_after_the_payload_are_ignored(pair):
    receiver, sender = pair
    payload = json.dumps(enqueue_obj(receiver, sender, "t-1")).encode()
    ack = ack_of(exchange(receiver.socket_path, frame(payload) + b"trailing garbage"))
    assert ack["status"] == "accepted"


def test_stalled_header_times_out_with_invalid(pair):
    receiver, _ = pair
    with connect(receiver.socket_path, timeout=10) as sock:
        sock.sendall(b"ZCODER-AGENT/1 12")  # never an LF
        started = time.monotonic()
        response = read_all(sock, timeout=10)
        elapsed = time.monotonic() - started
    assert ack_of(response)["status"] == "invalid"
    assert elapsed < receiver.settings.io_timeout + 2


def test_stalled_client_with_half_header_does_not_delay_another_client(pair):
    receiver, sender = pair
    stalled = connect(receiver.socket_path, timeout=10)
    try:
        stalled.sendall(b"ZCODER-AGENT/1 4")
        started = time.monotonic()
        ack = send_json(receiver.socket_path, enqueue_obj(receiver, sender, "healthy-1"))
        elapsed = time.monotonic() - started
        assert ack["status"] == "accepted"
        assert elapsed < receiver.settings.io_timeout / 2
    finally:
        stalled.close()


def test_a_client_that_connects_and_sends_nothing_does_not_hold_the_listener(pair):
    # The listener reads a connection straight after accepting it, on a socket left in
    # blocking mode (MSG_DONTWAIT on each read and write): a client that has written
    # nothing yet must not hold the loop in that read.
    receiver, sender = pair
    silent = connect(receiver.socket_path, timeout=10)
    try:
        deadline = time.monotonic() + 30
        while receiver.listener.open_connections < 1:  # accepted, and its read returned
            assert time.monotonic() < deadline, "the listener never took the connection"
            time.sleep(0.01)
        ack = send_json(receiver.socket_path, enqueue_obj(receiver, sender, "healthy-2"))
        assert ack["status"] == "accepted"
    finally:
        silent.close()


def test_partial_payload_then_eof_answers_invalid_and_stores_nothing(pair):
    receiver, sender = pair
    payload = json.dumps(enqueue_obj(receiver, sender, "p-1")).encode()
    with connect(receiver.socket_path) as sock:
        sock.sendall(frame(payload)[:-5])
        sock.shutdown(socket.SHUT_WR)
        ack = ack_of(read_all(sock))
    assert ack["status"] == "invalid"
    assert receiver.claim_one() is None


def test_eof_before_anything_closes_quietly(pair):
    receiver, _ = pair
    with connect(receiver.socket_path) as sock:
        sock.shutdown(socket.SHUT_WR)
        response = read_all(sock)
    assert response == b"" or ack_of(response)["status"] == "invalid"
    assert send_json(receiver.socket_path, ping_obj(receiver))["status"] == "pong"


def test_client_that_closes_before_reading_the_ack_leaves_listener_serving(pair):
    receiver, sender = pair
    for n in range(20):
        sock = connect(receiver.socket_path)
        sock.sendall(frame(json.dumps(enqueue_obj(receiver, sender, f"gone-{n}")).encode()))
        sock.close()
    time.sleep(0.2)
    assert receiver.listener is not None and receiver.listener.alive
    assert send_json(receiver.socket_path, ping_obj(receiver))["status"] == "pong"


def test_many_stalled_clients_never_lock_out_a_healthy_one(pair):
    receiver, sender = pair
    stalled = []
    try:
        for _ in range(100):
            sock = connect(receiver.socket_path, timeout=10)
            stalled.append(sock)
            # Past the cap the oldest are answered and closed, so this may find it gone.
            with contextlib.suppress(OSError):
                sock.sendall(b"ZCODER-")
        ack = send_json(receiver.socket_path, enqueue_obj(receiver, sender, "crowd-1"))
        assert ack["status"] == "accepted"
        assert receiver.listener is not None
        assert receiver.listener.open_connections <= 64
    finally:
        for sock in stalled:
            sock.close()


def test_concurrent_clients_all_get_acks(pair):
    receiver, sender = pair
    results: list[str] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        ack = send_json(receiver.socket_path, enqueue_obj(receiver, sender, f"c-{n}"))
        with lock:
            results.append(ack["status"])

    threads = [threading.Thread(target=client, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["accepted"] * 12


def test_descriptors_are_closed_on_success_error_timeout_and_shutdown(make_relay, relay_env):
    before = open_fds()
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    send_json(receiver.socket_path, ping_obj(receiver))
    send_json(receiver.socket_path, enqueue_obj(receiver, sender, "fd-1"))
    exchange(receiver.socket_path, b"garbage\n")
    with connect(receiver.socket_path) as sock:
        sock.sendall(b"ZCODER-AGENT/1 5\n{")
        read_all(sock, timeout=5)  # times out on the listener side: invalid, closed
    during = open_fds()
    receiver.stop()
    sender.stop()
    after = open_fds()
    assert after == before, (before, during, after)


def test_listener_process_descriptors_do_not_grow(pair):
    receiver, _ = pair
    for _ in range(5):
        send_json(receiver.socket_path, ping_obj(receiver))
    baseline = len(open_fds())
    for n in range(300):
        if n % 3 == 0:
            send_json(receiver.socket_path, ping_obj(receiver))
        elif n % 3 == 1:
            exchange(receiver.socket_path, b"nonsense\n")
        else:
            sock = connect(receiver.socket_path)
            sock.close()
    time.sleep(0.1)
    assert len(open_fds()) <= baseline
    assert receiver.listener is not None and receiver.listener.open_connections == 0


_OTHER_UID_CLIENT = r"""
import os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect(path)
except OSError as exc:
    print("connect-failed", exc.errno); sys.exit(0)
try:
    s.sendall(b'ZCODER-AGENT/1 2\n{}')
    data = s.recv(4096)
except OSError as exc:
    print("io-failed", exc.errno); sys.exit(0)
print("answered" if data else "closed")
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another uid")
def test_other_uid_is_refused_even_with_loosened_modes(pair, short_dir):
    receiver, _ = pair
    assert receiver.registry is not None and receiver.socket_path is not None
    # Open every mode an attacker of another uid would need; the kernel's word on the
    # peer's uid must still refuse it, as ssh-agent's getpeereid test shows.
    os.chmod(short_dir, 0o755)
    os.chmod(receiver.registry, 0o755)
    os.chmod(receiver.socket_path, 0o666)
    try:
        out = subprocess.run(
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                sys.executable,
                "-c",
                _OTHER_UID_CLIENT,
                str(receiver.socket_path),
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={"PATH": os.environ.get("PATH", "")},
        )
    finally:
        os.chmod(short_dir, 0o700)
        os.chmod(receiver.registry, 0o700)
        os.chmod(receiver.socket_path, 0o600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] in ("closed", "io-failed"), out.stdout
    assert receiver.listener is not None and receiver.listener.refused_peers >= 1
    assert send_json(receiver.socket_path, ping_obj(receiver))["status"] == "pong"
