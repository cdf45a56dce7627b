"""Receipts between real relays: honest, bounded, unforgeable, and quiet with zcoder.zsh."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.relay.conftest import RelayFactory, write_manifest
from tests.relay.wire import ack_of, exchange, frame, send_json
from zcoder.relay import ClaimedMessage, Relay
from zcoder.relay.framing import encode_frame
from zcoder.relay.protocol import (
    Ack,
    Scalar,
    decode_flat_object,
    encode_flat_object,
)
from zcoder.relay.receipts import OUTCOMES, SUMMARY_MAX_CHARS


def _task(sender: Relay, receiver: Relay, body: str = "do it") -> ClaimedMessage:
    assert receiver.instance_id is not None
    sent = sender.send(receiver.instance_id, body)
    assert sent.status == "accepted", sent.text
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    return claimed


def _receipt(receiver: Relay, in_reply_to: str, **over: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "protocol": 1,
        "type": "receipt",
        "message_id": f"{receiver.instance_id}-r99",
        "target_instance_id": "",
        "sender_instance_id": receiver.instance_id,
        "sender_pid": os.getpid(),
        "in_reply_to": in_reply_to,
        "outcome": "completed",
        "summary": "done",
    }
    obj.update(over)
    return obj


def test_a_receipt_reaches_the_sender_with_its_outcome_and_summary(
    make_relay: RelayFactory,
) -> None:
    sender, receiver = make_relay("sender"), make_relay("receiver")
    claimed = _task(sender, receiver)
    status = receiver.send_receipt(claimed.envelope, "completed", "Fixed the bug in parse().")
    assert status == "accepted"
    ((receipt, sent),) = sender.take_receipts()
    assert receipt.in_reply_to == claimed.envelope.message_id
    assert receipt.outcome == "completed"
    assert receipt.summary == "Fixed the bug in parse()."
    assert receipt.sender_instance_id == receiver.instance_id
    assert sent.target_label == "receiver" and sent.body_preview == "do it"
    assert sender.take_receipts() == []  # taken once


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_every_outcome_is_carried(make_relay: RelayFactory, outcome: str) -> None:
    sender, receiver = make_relay("sender"), make_relay("receiver")
    claimed = _task(sender, receiver)
    assert receiver.send_receipt(claimed.envelope, outcome, "") == "accepted"
    ((receipt, _),) = sender.take_receipts()
    assert receipt.outcome == outcome


def test_a_long_summary_is_cut_to_the_bound(make_relay: RelayFactory) -> None:
    sender, receiver = make_relay("sender"), make_relay("receiver")
    claimed = _task(sender, receiver)
    assert receiver.send_receipt(claimed.envelope, "completed", "x" * 10_000) == "accepted"
    ((receipt, _),) = sender.take_receipts()
    assert len(receipt.summary) == SUMMARY_MAX_CHARS and receipt.summary.endswith("…")


def test_one_receipt_per_task_and_a_retry_is_a_duplicate(make_relay: RelayFactory) -> None:
    sender, receiver = make_relay("sender"), make_relay("receiver")
    claimed = _task(sender, receiver)
    assert sender.socket_path is not None
    obj = _receipt(receiver, claimed.envelope.message_id, target_instance_id=sender.instance_id)
    assert send_json(sender.socket_path, obj)["status"] == "accepted"
    assert send_json(sender.socket_path, obj)["status"] == "duplicate"  # the same, retried
    second = {**obj, "message_id": f"{receiver.instance_id}-r100", "outcome": "failed"}
    assert send_json(sender.socket_path, second)["status"] == "invalid"
    assert len(sender.take_receipts()) == 1


def test_a_receipt_cannot_be_forged_by_another_instance_or_for_nothing(
    make_relay: RelayFactory,
) -> None:
    sender, receiver, other = make_relay("sender"), make_relay("receiver"), make_relay("other")
    claimed = _task(sender, receiver)
    assert sender.socket_path is not None
    base = {"target_instance_id": sender.instance_id}
    # Another registered instance claims to report on a task it was never sent.
    forged = _receipt(other, claimed.envelope.message_id, **base)
    assert send_json(sender.socket_path, forged)["status"] == "invalid"
    # A task id this instance never sent.
    invented = _receipt(receiver, f"{sender.instance_id}-999", **base)
    assert send_json(sender.socket_path, invented)["status"] == "invalid"
    # A receipt id that is not the sender's own.
    foreign_id = _receipt(
        receiver, claimed.envelope.message_id, message_id=f"{other.instance_id}-r1", **base
    )
    assert send_json(sender.socket_path, foreign_id)["status"] == "invalid"
    # Claiming to be the receiver with another pid.
    wrong_pid = _receipt(receiver, claimed.envelope.message_id, sender_pid=1, **base)
    assert send_json(sender.socket_path, wrong_pid)["status"] == "invalid"
    assert sender.take_receipts() == []
    # The real one still gets in afterwards.
    assert receiver.send_receipt(claimed.envelope, "completed", "ok") == "accepted"


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("outcome", "done"),
        ("outcome", 1),
        ("summary", "s" * (SUMMARY_MAX_CHARS + 1)),
        ("summary", 5),
        ("in_reply_to", ""),
        ("sender_pid", -1),
        ("sender_pid", True),
    ],
)
def test_receipt_members_are_validated(
    make_relay: RelayFactory, member: str, value: object
) -> None:
    sender, receiver = make_relay("sender"), make_relay("receiver")
    claimed = _task(sender, receiver)
    assert sender.socket_path is not None
    obj = _receipt(receiver, claimed.envelope.message_id, target_instance_id=sender.instance_id)
    obj[member] = value
    assert send_json(sender.socket_path, obj)["status"] == "invalid"
    assert sender.take_receipts() == []


class ZshShapedPeer:
    """A listener that knows ping and enqueue only, as zcoder.zsh: `unsupported` for the
    rest. It records every request it gets."""

    def __init__(self, path: Path) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        self.requests: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\n" not in data or len(data.split(b"\n", 1)[1]) < int(
                    data.split(b"\n", 1)[0].split(b" ")[1]
                ):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                obj = decode_flat_object(data.split(b"\n", 1)[1])
                self.requests.append(obj)
                status = {"ping": "pong", "enqueue": "accepted"}.get(str(obj["type"]))
                ack = Ack(str(obj.get("message_id", "")), status or "unsupported")
                conn.sendall(encode_frame(ack.to_payload(), 65536))

    def close(self) -> None:
        self.server.close()


def test_a_zsh_shaped_sender_is_remembered_as_receiptless_without_an_error(
    make_relay: RelayFactory, registry: Path
) -> None:
    receiver = make_relay("receiver")
    # Ids begin with the sender's pid, which must be a live process's: this one stands in.
    zsh_id = f"{os.getpid()}-1700000000123"
    peer = ZshShapedPeer(registry / f"a-{zsh_id}.sock")
    try:
        write_manifest(registry, zsh_id, project="legacy", workspace="/w/legacy")
        # The zsh peer sends a task (by hand, as zcoder.zsh would).
        assert receiver.socket_path is not None
        task: dict[str, Scalar] = {
            "protocol": 1,
            "type": "enqueue",
            "message_id": f"{zsh_id}-1",
            "target_instance_id": receiver.instance_id,
            "sender_instance_id": zsh_id,
            "sender_pid": os.getpid(),
            "sender_project": "legacy",
            "sender_workspace": "/w/legacy",
            "body": "hello from zsh",
            "created_at": 1,
        }
        assert ack_of(exchange(receiver.socket_path, frame(encode_flat_object(task))))[
            "status"
        ] == ("accepted")
        claimed = receiver.claim_one()
        assert isinstance(claimed, ClaimedMessage)
        assert receiver.send_receipt(claimed.envelope, "completed", "done") == "unsupported"
        assert [r["type"] for r in peer.requests] == ["receipt"]
        # Never again: no second connection for the next task's receipt.
        assert receiver.send_receipt(claimed.envelope, "completed", "done") == "receiptless"
        assert [r["type"] for r in peer.requests] == ["receipt"]
    finally:
        peer.close()


def test_fuzzed_receipts_never_crash_and_only_a_valid_one_is_accepted(
    make_relay: RelayFactory,
) -> None:
    sender, receiver = make_relay("sender"), make_relay("receiver")
    claimed = _task(sender, receiver)
    assert sender.socket_path is not None
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**63), 2**63),
        st.floats(allow_nan=False),
        st.text(max_size=40),
    )
    members = st.sampled_from(
        ["message_id", "sender_instance_id", "sender_pid", "in_reply_to", "outcome", "summary"]
    )

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(members, scalars, max_size=4))
    def check(changes: dict[str, object]) -> None:
        assert sender.socket_path is not None
        obj = _receipt(receiver, claimed.envelope.message_id, target_instance_id=sender.instance_id)
        obj.update(changes)
        ack = send_json(sender.socket_path, obj)
        assert ack["status"] in ("invalid", "accepted", "duplicate")
        if ack["status"] != "invalid":
            assert obj["in_reply_to"] == claimed.envelope.message_id
            assert obj["outcome"] in OUTCOMES

    check()
    assert len(sender.take_receipts()) <= 1
