"""Malformed, oversized, duplicate, stale, unsafe and cross-instance requests fail closed.

``run`` tries ``per_kind`` inputs of each kind against a live listener (an in-process
receiver: its spool is inspected directly) and counts how many were refused. Between the
kinds it sends valid enqueues; at the end every one of them that was accepted must be
claimable exactly once, so "nothing accepted was lost" is counted too. Used by
``make bench`` (the table in docs/performance.md) and by tests/relay/test_reliability.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import Workspace
from zcoder.relay import ClaimedMessage, QuarantinedMessage, Relay
from zcoder.relay.protocol import encode_flat_object

CONTROL_PER_KIND = 2
IO_TIMEOUT = 5.0


@dataclass
class KindCount:
    kind: str
    tried: int = 0
    refused: int = 0
    how: dict[str, int] = field(default_factory=dict)

    def record(self, refused: bool, outcome: str) -> None:
        self.tried += 1
        self.refused += refused
        self.how[outcome] = self.how.get(outcome, 0) + 1


@dataclass
class FailClosedResult:
    kinds: list[KindCount] = field(default_factory=list)
    control_sent: int = 0
    control_accepted: int = 0
    control_claimed: int = 0
    skipped: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return self.control_accepted - self.control_claimed


def _exchange(path: Path, raw: bytes) -> str:
    """Send raw bytes, half-close, read to EOF; the ack status, or "closed"."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(IO_TIMEOUT)
        sock.connect(os.fspath(path))
        with contextlib.suppress(OSError):
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)
        data = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                data += chunk
    _, _, payload = data.partition(b"\n")
    try:
        return str(json.loads(payload)["status"])
    except (ValueError, KeyError, TypeError):
        return "closed"


def _frame(payload: bytes) -> bytes:
    return b"ZCODER-AGENT/1 " + str(len(payload)).encode() + b"\n" + payload


class _Probe:
    def __init__(self, receiver: Relay, sender: Relay) -> None:
        assert receiver.socket_path is not None and sender.instance_id is not None
        self.receiver = receiver
        self.sender = sender
        self.path = receiver.socket_path
        self.n = 0
        self.accepted_ids: set[str] = set()
        self.claimed_ids: set[str] = set()
        self.sent = 0

    def envelope(self, **override: object) -> dict[str, object]:
        self.n += 1
        assert self.sender.instance_id is not None
        # An id of the sender named, so that each probe meets the rule it is about, not
        # the one that ids belong to their sender.
        sender_id = override.get("sender_instance_id", self.sender.instance_id)
        obj: dict[str, object] = {
            "protocol": 1,
            "type": "enqueue",
            "message_id": f"{sender_id}-fc{self.n}",
            "target_instance_id": self.receiver.instance_id,
            "sender_instance_id": self.sender.instance_id,
            "sender_pid": os.getpid(),
            "sender_project": self.sender.workspace.name,
            "sender_workspace": str(self.sender.workspace),
            "body": f"control task {self.n}",
            "created_at": 1796206255,
        }
        obj.update(override)
        return obj

    def send(self, obj: dict[str, object]) -> str:
        payload = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
        return _exchange(self.path, _frame(payload))

    def control(self, result: FailClosedResult) -> None:
        for _ in range(CONTROL_PER_KIND):
            obj = self.envelope()
            result.control_sent += 1
            if self.send(obj) == "accepted":
                result.control_accepted += 1
                self.accepted_ids.add(str(obj["message_id"]))


def _malformed(probe: _Probe, count: KindCount, per_kind: int) -> None:
    good = json.dumps(probe.envelope()).encode()
    variants: list[bytes] = [
        b"ZCODER-AGENT/2 " + str(len(good)).encode() + b"\n" + good,  # wrong magic
        b"ZCODER-AGENT/1 " + str(len(good)).encode() + b"\r\n" + good,  # CR
        b"ZCODER-AGENT/1 12x\n" + good,  # not digits
        b"ZCODER-AGENT/1 0\n",  # empty payload
        b"ZCODER-AGENT/1 -5\n" + good,
        _frame(good[:-7]),  # truncated JSON
        _frame(b'{"protocol":1,"nested":{"a":1}}'),
        _frame(b"[1,2,3]"),
        _frame(b'{"protocol":1,"type":"enqueue","body":"\xff\xfe"}'),
        _frame(b'{"protocol":1,"protocol":1}'),  # duplicate member
        _frame(b'{"protocol":NaN}'),
        b"ZCODER-AGENT/1 " + str(len(good)).encode(),  # header never ends, then EOF
        _frame(good)[: len(good) // 2],  # half a frame, then EOF
        b"GET / HTTP/1.1\r\n\r\n",
        bytes(range(256)),
    ]
    for n in range(per_kind):
        status = _exchange(probe.path, variants[n % len(variants)])
        count.record(status != "accepted", status)


def _oversized(probe: _Probe, count: KindCount, per_kind: int) -> None:
    max_bytes = probe.receiver.settings.max_bytes
    max_chars = probe.receiver.settings.max_message_chars
    for n in range(per_kind):
        choice = n % 3
        if choice == 0:  # declared length over the limit, nothing behind it
            raw = b"ZCODER-AGENT/1 " + str(max_bytes + 1 + n).encode() + b"\n"
        elif choice == 1:  # the bytes really sent
            body = "x" * (max_bytes + 16)
            raw = _frame(json.dumps(probe.envelope(body=body)).encode())
        else:  # a frame within bounds carrying a body over the character limit
            body = "é" * (max_chars + 1)
            raw = _frame(json.dumps(probe.envelope(body=body), ensure_ascii=False).encode())
        status = _exchange(probe.path, raw)
        count.record(status != "accepted", status)


def _duplicates(probe: _Probe, count: KindCount, per_kind: int) -> None:
    ids = sorted(probe.accepted_ids)
    for n in range(per_kind):
        obj = probe.envelope(message_id=ids[n % len(ids)])
        status = probe.send(obj)
        count.record(status != "accepted", status)


def _stale(probe: _Probe, count: KindCount, per_kind: int, space: Workspace) -> None:
    registry = probe.receiver.registry
    assert registry is not None
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    dead_id = f"{dead.pid}-1"
    manifest = {
        "protocol": 1, "instance_id": dead_id, "pid": dead.pid, "project": "gone",
        "workspace": str(space.root / "gone"), "session_id": "", "profile": "coding",
        "model": "", "socket": str(registry / f"a-{dead_id}.sock"), "state": "ready",
        "started_at": 1,
    }  # fmt: skip
    (registry / f"a-{dead_id}.json").write_bytes(encode_flat_object(manifest))  # type: ignore[arg-type]
    own_pid = os.getpid()
    variants: list[dict[str, object]] = [
        {"sender_instance_id": dead_id, "sender_pid": dead.pid},  # dead process
        {"sender_instance_id": f"{own_pid}-999999", "sender_pid": own_pid},  # no manifest
        {"sender_pid": own_pid + 1},  # id does not begin with the pid
        {"sender_instance_id": f"{dead.pid}-2", "sender_pid": dead.pid},  # never registered
    ]
    try:
        for n in range(per_kind):
            status = probe.send(probe.envelope(**variants[n % len(variants)]))
            count.record(status != "accepted", status)
    finally:
        with contextlib.suppress(OSError):
            (registry / f"a-{dead_id}.json").unlink()


def _cross_instance(probe: _Probe, count: KindCount, per_kind: int) -> None:
    assert probe.sender.instance_id is not None
    targets = [probe.sender.instance_id, "1-1", f"{probe.receiver.instance_id}x", ""]
    for n in range(per_kind):
        status = probe.send(probe.envelope(target_instance_id=targets[n % len(targets)]))
        count.record(status != "accepted", status)


def _unsafe_spool(probe: _Probe, count: KindCount, per_kind: int) -> None:
    """Plant entries in the private inbox; each must be quarantined, never handed out."""
    spool = probe.receiver.spool
    assert spool is not None
    inbox = spool.root / "inbox"
    outside = spool.root.parent / "outside.json"
    outside.write_bytes(json.dumps(probe.envelope(message_id="planted-link")).encode())
    planted: set[str] = set()
    for n in range(per_kind):
        name = f"{900000000 + n:09d}-planted-{n}.json"
        path = inbox / name
        choice = n % 6
        if choice == 0:
            path.symlink_to(outside)
        elif choice == 1:
            path.write_bytes(b"garbage, not JSON")
        elif choice == 2:  # addressed to another instance
            path.write_bytes(json.dumps(probe.envelope(target_instance_id="1-1")).encode())
        elif choice == 3:  # message_id does not match the file name
            path.write_bytes(json.dumps(probe.envelope()).encode())
        elif choice == 4:
            path.mkdir()
        else:
            path.write_bytes(b"{" + b" " * (probe.receiver.settings.max_bytes + 1) + b"}")
        planted.add(name)
    while (claimed := probe.receiver.claim_one()) is not None:
        if isinstance(claimed, QuarantinedMessage):
            if claimed.name in planted:
                count.record(True, "quarantined")
        elif claimed.path.name in planted:
            count.record(False, "handed out")
        else:
            probe.claimed_ids.add(claimed.envelope.message_id)
            probe.receiver.complete(claimed)
    with contextlib.suppress(OSError):
        outside.unlink()


_OTHER_UID_CLIENT = r"""
import os, socket, sys
path, n = sys.argv[1], int(sys.argv[2])
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(path)
        s.sendall(b'ZCODER-AGENT/1 2\n{}')
        data = s.recv(4096)
        print("answered" if data else "closed")
    except OSError as exc:
        print("refused-errno-%d" % exc.errno)
    finally:
        s.close()
"""


def _other_uid(probe: _Probe, count: KindCount, per_kind: int, space: Workspace) -> str | None:
    if os.geteuid() != 0:
        return "other-uid: not run (needs root to act as another uid)"
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "other-uid: not run (setpriv is not installed)"
    registry, sock = probe.receiver.registry, probe.receiver.socket_path
    assert registry is not None and sock is not None and probe.receiver.listener is not None
    before = probe.receiver.listener.refused_peers
    # Loosen every mode an attacker of another uid would need: the kernel's word on the
    # peer's uid must refuse it anyway.
    modes = [(space.root, 0o755), (registry, 0o755), (sock, 0o666)]
    try:
        for path, mode in modes:
            os.chmod(path, mode)
        out = subprocess.run(
            [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
             "-c", _OTHER_UID_CLIENT, str(sock), str(per_kind)],
            capture_output=True, text=True, timeout=120, check=False,
            env={"PATH": os.environ.get("PATH", "")},
        )  # fmt: skip
    finally:
        for path, _mode in modes:
            os.chmod(path, 0o600 if path == sock else 0o700)
    for line in out.stdout.split():
        count.record(line != "answered", line)
    refused_by_listener = probe.receiver.listener.refused_peers - before
    count.how["refused by SO_PEERCRED"] = refused_by_listener
    return None


def run(space: Workspace, per_kind: int) -> FailClosedResult:
    result = FailClosedResult()
    receiver = space.relay("fc-receiver", ZCODER_RELAY_MAX_QUEUE="256")
    sender = space.relay("fc-sender")
    try:
        probe = _Probe(receiver, sender)
        probe.control(result)
        steps = [
            ("malformed frames", lambda c: _malformed(probe, c, per_kind)),
            ("oversized frames and bodies", lambda c: _oversized(probe, c, per_kind)),
            ("duplicate message ids", lambda c: _duplicates(probe, c, per_kind)),
            ("stale or unregistered senders", lambda c: _stale(probe, c, per_kind, space)),
            ("wrong target (cross-instance)", lambda c: _cross_instance(probe, c, per_kind)),
            ("unsafe spool entries (planted)", lambda c: _unsafe_spool(probe, c, per_kind)),
        ]
        for kind, step in steps:
            count = KindCount(kind)
            step(count)
            result.kinds.append(count)
            probe.control(result)
        count = KindCount("another uid (SO_PEERCRED)")
        skipped = _other_uid(probe, count, per_kind, space)
        if skipped is None:
            result.kinds.append(count)
            probe.control(result)
        else:
            result.skipped.append(skipped)
        while (claimed := receiver.claim_one()) is not None:
            if isinstance(claimed, ClaimedMessage):
                probe.claimed_ids.add(claimed.envelope.message_id)
                receiver.complete(claimed)
        result.control_claimed = len(probe.accepted_ids & probe.claimed_ids)
    finally:
        sender.stop()
        receiver.stop()
    return result
