"""No byte string makes the listener crash or answer anything but a well-formed ack or a close."""

from __future__ import annotations

import json
import random
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.relay.wire import enqueue_obj, frame, send_json
from zcoder.relay import ClaimedMessage
from zcoder.relay.protocol import STATUSES

pytestmark = pytest.mark.timeout(300)


def _probe(path, raw: bytes) -> bytes:
    """Send raw bytes, half-close (so nothing waits for the deadline), read to EOF."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        try:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the listener may already have answered and closed
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk


def _assert_ack_or_close(response: bytes) -> str | None:
    if response == b"":
        return None
    header, sep, payload = response.partition(b"\n")
    assert sep == b"\n", response
    assert header.startswith(b"ZCODER-AGENT/1 "), response
    assert int(header[15:]) == len(payload), response
    ack = json.loads(payload)
    spec = ["protocol", "type", "message_id", "status", "queue_position", "state"]
    # The spec's members in its order; a refusal may add why, last (zcoder.zsh ignores it).
    assert list(ack) in (spec, [*spec, "reason"]), ack
    assert "reason" not in ack or (ack["status"] == "invalid" and isinstance(ack["reason"], str))
    assert ack["protocol"] == 1 and ack["type"] == "ack"
    assert ack["status"] in STATUSES
    assert ack["state"] in ("ready", "busy", "paused")
    return str(ack["status"])


def _mutations(base: bytes, rng: random.Random) -> bytes:
    data = bytearray(base)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(6)
        pos = rng.randrange(len(data) + 1)
        if choice == 0 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif choice == 1:
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif choice == 2 and data:
            del data[pos : pos + rng.randint(1, 8)]
        elif choice == 3:
            data = data[:pos]
        elif choice == 4:
            data[pos:pos] = rng.choice([b"\n", b"\\", b'"', b"{", b"}", b"\x00", b"\xff", b"9" * 9])
        else:
            data += data[: rng.randint(0, 32)]
    return bytes(data)


@pytest.fixture
def pair(make_relay, relay_env):
    env = {**relay_env, "ZCODER_RELAY_MAX_QUEUE": "256"}
    return make_relay("receiver", env=env), make_relay("sender", env=env)


def test_arbitrary_bytes_get_an_ack_or_a_close(pair):
    receiver, _ = pair

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.binary(max_size=300))
    def check(raw: bytes) -> None:
        _assert_ack_or_close(_probe(receiver.socket_path, raw))

    check()
    assert receiver.listener is not None and receiver.listener.alive


def test_framed_arbitrary_payloads_get_an_ack(pair):
    receiver, _ = pair

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.binary(min_size=1, max_size=300))
    def check(payload: bytes) -> None:
        assert _assert_ack_or_close(_probe(receiver.socket_path, frame(payload))) is not None

    check()


def test_ten_thousand_mutated_frames_then_a_valid_enqueue_is_accepted(pair):
    receiver, sender = pair
    rng = random.Random(20261202)
    seeds = [
        frame(json.dumps(enqueue_obj(receiver, sender, f"seed-{n}", "body ✓\n" * n)).encode())
        for n in range(1, 6)
    ] + [
        frame(
            json.dumps(
                {
                    "protocol": 1,
                    "type": "ping",
                    "message_id": "p",
                    "target_instance_id": receiver.instance_id,
                }
            ).encode()
        )
    ]
    counts: dict[str | None, int] = {}
    for _ in range(10_000):
        raw = _mutations(rng.choice(seeds), rng)
        status = _assert_ack_or_close(_probe(receiver.socket_path, raw))
        counts[status] = counts.get(status, 0) + 1
    # Whatever was accepted is whole in the spool and claimable.
    accepted = counts.get("accepted", 0)
    claimed = 0
    while (item := receiver.claim_one()) is not None:
        if isinstance(item, ClaimedMessage):
            receiver.complete(item)
            claimed += 1
    assert claimed == accepted
    assert receiver.listener is not None and receiver.listener.alive
    ack = send_json(receiver.socket_path, enqueue_obj(receiver, sender, "after-the-storm"))
    assert ack["status"] == "accepted"
