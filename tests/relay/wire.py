"""Raw-socket helpers for relay tests: bytes in, bytes out, no zcoder client code."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from zcoder.relay import Relay


def frame(payload: bytes) -> bytes:
    return b"ZCODER-AGENT/1 " + str(len(payload)).encode() + b"\n" + payload


def connect(path: Path, timeout: float = 5.0) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(os.fspath(path))
    return sock


def read_all(sock: socket.socket, timeout: float = 5.0) -> bytes:
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return data
        if not chunk:
            return data
        data += chunk


def exchange(path: Path, raw: bytes, timeout: float = 5.0) -> bytes:
    """Write raw bytes, then read the whole response to EOF."""
    with connect(path, timeout) as sock:
        sock.sendall(raw)
        return read_all(sock, timeout)


def ack_of(response: bytes) -> dict[str, Any]:
    header, _, payload = response.partition(b"\n")
    assert header.startswith(b"ZCODER-AGENT/1 "), response
    assert int(header.split(b" ")[1]) == len(payload), response
    value: dict[str, Any] = json.loads(payload)
    assert list(value) == ["protocol", "type", "message_id", "status", "queue_position", "state"]
    return value


def send_json(path: Path, obj: dict[str, Any]) -> dict[str, Any]:
    payload = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    return ack_of(exchange(path, frame(payload)))


def send_json_with_reason(path: Path, obj: dict[str, Any]) -> dict[str, Any]:
    """``send_json`` for an ack that may say why (its extra member ``reason``)."""
    payload = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    value: dict[str, Any] = json.loads(exchange(path, frame(payload)).partition(b"\n")[2])
    return value


def own_id(sender: Relay, local_id: str) -> str:
    """A message id of ``sender``'s: ``<sender instance id>-<local_id>`` (receivers refuse
    an enqueue whose id does not begin with its sender's instance id)."""
    return f"{sender.instance_id}-{local_id}"


def enqueue_obj(
    receiver: Relay, sender: Relay, local_id: str, body: str = "do the thing", **extra: Any
) -> dict[str, Any]:
    """An enqueue from ``sender`` with the message id ``own_id(sender, local_id)``."""
    obj: dict[str, Any] = {
        "protocol": 1,
        "type": "enqueue",
        "message_id": own_id(sender, local_id),
        "target_instance_id": receiver.instance_id,
        "sender_instance_id": sender.instance_id,
        "sender_pid": os.getpid(),
        "sender_project": sender.workspace.name,
        "sender_workspace": str(sender.workspace),
        "body": body,
        "created_at": 1796206255,
    }
    obj.update(extra)
    return obj


def ping_obj(receiver: Relay, message_id: str = "ping-1-1") -> dict[str, Any]:
    return {
        "protocol": 1,
        "type": "ping",
        "message_id": message_id,
        "target_instance_id": receiver.instance_id,
        "sender_instance_id": "1-1",
    }


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))
