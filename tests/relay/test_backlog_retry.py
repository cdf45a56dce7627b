"""A sender whose connect finds the listener's backlog full tries again within its deadline."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from zcoder.relay.client import TransportError, request
from zcoder.relay.framing import encode_frame
from zcoder.relay.protocol import Ack, decode_flat_object, encode_flat_object


def _fill_backlog(path: Path) -> list[socket.socket]:
    """Connect until the listener (which accepts nothing) refuses with EAGAIN."""
    fillers: list[socket.socket] = []
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(str(path))
        except BlockingIOError:
            sock.close()
            return fillers
        fillers.append(sock)


def _payload(message_id: str) -> bytes:
    return encode_flat_object({"protocol": 1, "type": "ping", "message_id": message_id})


def test_a_full_backlog_is_retried_with_the_same_message_until_it_is_accepted(
    short_dir: Path,
) -> None:
    path = short_dir / "a-1-1.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    fillers = _fill_backlog(path)
    outcome: dict[str, object] = {}

    def send() -> None:
        try:
            outcome["ack"] = request(path, _payload("9-9-1"), timeout=20, max_bytes=65536)
        except TransportError as exc:
            outcome["error"] = exc.reason

    sender = threading.Thread(target=send)
    sender.start()
    time.sleep(0.3)  # the sender's first connects meet the full backlog
    assert "error" not in outcome, outcome
    # Drain: the fillers hang up, their connections are accepted and closed, and the
    # sender's gets in and is served.
    for sock in fillers:
        sock.close()
    seen: list[str] = []
    server.settimeout(10)
    while sender.is_alive():
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\n" not in data or len(data) < data.index(b"\n") + 1 + int(
                    data.split(b" ", 1)[1].split(b"\n", 1)[0]
                ):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except (TimeoutError, IndexError, ValueError):
                continue
            if not data:
                continue  # a filler
            body = data.split(b"\n", 1)[1]
            message_id = str(decode_flat_object(body)["message_id"])
            seen.append(message_id)
            conn.sendall(encode_frame(Ack(message_id, "pong").to_payload(), 65536))
    sender.join()
    server.close()
    assert outcome.get("ack") == Ack("9-9-1", "pong")
    assert seen == ["9-9-1"]


def test_a_backlog_that_stays_full_fails_at_the_deadline_not_before(short_dir: Path) -> None:
    path = short_dir / "a-1-2.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    fillers = _fill_backlog(path)
    try:
        with pytest.raises(TransportError) as caught:
            request(path, _payload("9-9-2"), timeout=0.5, max_bytes=65536)
        assert "stayed full" in caught.value.reason
        assert not caught.value.ambiguous  # nothing was sent: a retry cannot duplicate
    finally:
        for sock in fillers:
            sock.close()
        server.close()
