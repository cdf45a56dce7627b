"""Delivery modes and progress between real relays (issue 29): a steer reaches a running
turn only from a proven instance the user trusts, the sender is told which happened, and
progress is as honest, bounded and unforgeable as receipts, and quiet with zcoder.zsh."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.relay.conftest import RelayFactory, trusting_pair, write_manifest
from tests.relay.test_receipts import ZshShapedPeer, _receipt, _task
from tests.relay.wire import ack_of, exchange, frame, own_id, send_json_with_reason
from zcoder.relay import ClaimedMessage, Relay
from zcoder.relay.protocol import Scalar, decode_flat_object, encode_flat_object
from zcoder.relay.trust import TRUST


def _busy_trusting_pair(
    make_relay: RelayFactory, relay_env: dict[str, str], home: Path
) -> tuple[Relay, Relay]:
    """(alpha, beta): alpha runs a turn and trusts beta, a live interactive instance."""
    alpha = make_relay("alpha", home=home, interactive=True)
    beta = make_relay("beta", interactive=True)
    alpha.trust.set(str(beta.workspace), TRUST)
    alpha.set_state("busy")
    return alpha, beta


def test_a_trusted_instances_steer_to_a_busy_receiver_is_steered_and_claimed(
    make_relay: RelayFactory, relay_env: dict[str, str], tmp_path: Path
) -> None:
    alpha, beta = _busy_trusting_pair(make_relay, relay_env, tmp_path / "home")
    assert alpha.instance_id is not None
    queued = beta.send(alpha.instance_id, "an ordinary task")
    sent = beta.send(alpha.instance_id, "look at parse() first", delivery="steer")
    assert (sent.status, sent.delivery) == ("accepted", "steer"), sent.text
    assert "steered" in sent.text and "running turn" in sent.text
    assert queued.delivery == ""  # a request without delivery gets no such answer
    (steer,) = alpha.claim_steers()
    assert steer.envelope.body == "look at parse() first"
    assert steer.envelope.delivery == "steer" and steer.envelope.sender_kind == "instance"
    assert alpha.claim_steers() == []  # claimed once
    # The ordinary task is left for its own turn.
    ordinary = alpha.claim_one()
    assert isinstance(ordinary, ClaimedMessage) and ordinary.envelope.body == "an ordinary task"


def test_an_untrusted_instances_steer_is_queued_and_the_ack_says_so(
    make_relay: RelayFactory, relay_env: dict[str, str], tmp_path: Path
) -> None:
    alpha = make_relay("alpha", home=tmp_path / "home", interactive=True)
    beta = make_relay("beta", interactive=True)  # a proven instance, but not trusted
    alpha.set_state("busy")
    assert alpha.instance_id is not None
    sent = beta.send(alpha.instance_id, "steer me", delivery="steer")
    assert (sent.status, sent.delivery) == ("accepted", "queue"), sent.text
    assert "not steered" in sent.text and "does not take steering from you" in sent.text
    assert alpha.claim_steers() == []
    claimed = alpha.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert claimed.envelope.delivery == ""  # stored as what the sender was told: queued


def test_a_steer_to_an_idle_receiver_is_queued(
    make_relay: RelayFactory, relay_env: dict[str, str], tmp_path: Path
) -> None:
    alpha, beta = _busy_trusting_pair(make_relay, relay_env, tmp_path / "home")
    alpha.set_state("ready")
    assert alpha.instance_id is not None
    sent = beta.send(alpha.instance_id, "steer me", delivery="steer")
    assert (sent.status, sent.delivery) == ("accepted", "queue")
    assert "runs no turn" in sent.text
    assert alpha.claim_steers() == []


def test_a_receiver_that_runs_no_agent_queues_every_steer(
    make_relay: RelayFactory, relay_env: dict[str, str], tmp_path: Path
) -> None:
    # A relay-only peer (no agent turns to land a steer in), busy and trusting the sender.
    receiver = make_relay("receiver", home=tmp_path / "home")
    beta = make_relay("beta", interactive=True)
    receiver.trust.set(str(beta.workspace), TRUST)
    receiver.set_state("busy")
    assert receiver.instance_id is not None
    sent = beta.send(receiver.instance_id, "steer me", delivery="steer")
    assert (sent.status, sent.delivery) == ("accepted", "queue")


def test_a_stored_steer_is_not_claimed_once_its_sender_is_no_longer_trusted(
    make_relay: RelayFactory, relay_env: dict[str, str], tmp_path: Path
) -> None:
    alpha, beta = _busy_trusting_pair(make_relay, relay_env, tmp_path / "home")
    assert alpha.instance_id is not None
    assert beta.send(alpha.instance_id, "steer me", delivery="steer").delivery == "steer"
    alpha.trust.set(str(beta.workspace), None)  # the user withdrew the trust since
    assert alpha.claim_steers() == []  # the stored flag alone is never enough
    claimed = alpha.claim_one()
    assert isinstance(claimed, ClaimedMessage) and claimed.envelope.body == "steer me"


def test_a_held_steer_is_never_claimed_for_the_running_turn(
    make_relay: RelayFactory, relay_env: dict[str, str], tmp_path: Path
) -> None:
    # alpha holds messages by default; beta is trusted but not an interactive sender here:
    # a relay-only-shaped sender (no workspace lock) gets the default, held.
    alpha, _ = trusting_pair(make_relay, relay_env, tmp_path / "home", interactive=True)
    stranger = make_relay("stranger")
    alpha.set_state("busy")
    assert alpha.instance_id is not None
    sent = stranger.send(alpha.instance_id, "steer me", delivery="steer")
    assert (sent.status, sent.delivery) == ("accepted", "queue")
    assert alpha.claim_steers() == []
    assert len(alpha.held()) == 1


@pytest.mark.parametrize("value", ["bogus", "STEER", "", 1, True, None])
def test_an_unknown_delivery_is_invalid_with_a_reason(
    make_relay: RelayFactory, value: object
) -> None:
    sender, receiver = make_relay("sender"), make_relay("receiver")
    assert receiver.socket_path is not None
    envelope: dict[str, Any] = {
        "protocol": 1,
        "type": "enqueue",
        "message_id": own_id(sender, "7"),
        "target_instance_id": receiver.instance_id,
        "sender_instance_id": sender.instance_id,
        "sender_pid": os.getpid(),
        "sender_project": "sender",
        "sender_workspace": str(sender.workspace),
        "body": "hello",
        "delivery": value,
    }
    ack = send_json_with_reason(receiver.socket_path, envelope)
    assert ack["status"] == "invalid"
    assert receiver.claim_one() is None
    envelope["delivery"] = "queue"  # the default, spelled out: an ordinary message
    envelope["message_id"] = own_id(sender, "8")
    ack = send_json_with_reason(receiver.socket_path, envelope)
    assert (ack["status"], "delivery" in ack) == ("accepted", False)


# --- progress ------------------------------------------------------------------------


def _progress(receiver: Relay, in_reply_to: str, **over: Any) -> dict[str, Any]:
    """A progress request as a receiver sends one (members a receipt has are ignored)."""
    return _receipt(receiver, in_reply_to, **{"type": "progress", "stage": "started", **over})


def test_progress_reaches_the_sender_once_per_stage_before_the_receipt(
    make_relay: RelayFactory,
) -> None:
    sender, receiver = make_relay("sender"), make_relay("receiver")
    claimed = _task(sender, receiver)
    assert receiver.send_progress(claimed.envelope, "started") == "accepted"
    assert receiver.send_progress(claimed.envelope, "steered") == "accepted"
    assert receiver.send_progress(claimed.envelope, "started") == "duplicate"
    taken = sender.take_progress()
    assert [(p.stage, p.in_reply_to) for p, _ in taken] == [
        ("started", claimed.envelope.message_id),
        ("steered", claimed.envelope.message_id),
    ]
    assert taken[0][1].target_label == "receiver"
    assert sender.take_progress() == []
    assert receiver.send_receipt(claimed.envelope, "completed", "ok") == "accepted"
    # After the receipt, no progress for that message is taken.
    fresh = _task(sender, receiver, "second")
    assert receiver.send_progress(fresh.envelope, "started") == "accepted"
    assert sender.socket_path is not None
    late = _progress(
        receiver,
        claimed.envelope.message_id,
        target_instance_id=sender.instance_id,
        stage="steered",
        message_id=f"{receiver.instance_id}-p50",
    )
    assert send_json_with_reason(sender.socket_path, late)["status"] == "invalid"
    assert [p.in_reply_to for p, _ in sender.take_progress()] == [fresh.envelope.message_id]


def test_progress_cannot_be_forged(make_relay: RelayFactory) -> None:
    sender, receiver, other = make_relay("sender"), make_relay("receiver"), make_relay("other")
    claimed = _task(sender, receiver)
    assert sender.socket_path is not None
    base = {"target_instance_id": sender.instance_id}
    attacks = {
        # another registered instance, on a task it was never sent
        "wrong sender": _progress(other, claimed.envelope.message_id, **base),
        # a message this instance never sent
        "never sent": _progress(receiver, f"{sender.instance_id}-999", **base),
        "foreign id": _progress(
            receiver, claimed.envelope.message_id, message_id=f"{other.instance_id}-p1", **base
        ),
        "wrong pid": _progress(receiver, claimed.envelope.message_id, sender_pid=1, **base),
        "unknown stage": _progress(receiver, claimed.envelope.message_id, stage="done", **base),
        "stage not text": _progress(receiver, claimed.envelope.message_id, stage=1, **base),
    }
    for name, obj in attacks.items():
        ack = send_json_with_reason(sender.socket_path, obj)
        assert ack["status"] == "invalid", name
    assert sender.take_progress() == []
    assert receiver.send_progress(claimed.envelope, "started") == "accepted"  # the real one


def test_a_zsh_shaped_peer_takes_a_steer_as_a_task_and_answers_progress_once(
    make_relay: RelayFactory, registry: Path
) -> None:
    """Both ways with zcoder.zsh: it stores a steer as any task (it ignores the member),
    and its `unsupported` to progress costs one exchange: no receipt nor progress after."""
    zcoder_py = make_relay("py")
    zsh_id = f"{os.getpid()}-1700000000456"
    peer = ZshShapedPeer(registry / f"a-{zsh_id}.sock")
    try:
        write_manifest(registry, zsh_id, project="legacy", workspace="/w/legacy")
        sent = zcoder_py.send(zsh_id, "hello zsh", delivery="steer")
        assert (sent.status, sent.delivery) == ("accepted", ""), sent.text
        assert "queued at position" in sent.text  # an ordinary ack, said as ever
        (stored,) = [r for r in peer.requests if r["type"] == "enqueue"]
        assert stored["delivery"] == "steer" and stored["body"] == "hello zsh"
        # The zsh peer sends a task; the py side reports progress, then its receipt.
        assert zcoder_py.socket_path is not None
        task: dict[str, Scalar] = {
            "protocol": 1, "type": "enqueue", "message_id": f"{zsh_id}-1",
            "target_instance_id": zcoder_py.instance_id, "sender_instance_id": zsh_id,
            "sender_pid": os.getpid(), "sender_project": "legacy",
            "sender_workspace": "/w/legacy", "body": "from zsh", "created_at": 1,
        }  # fmt: skip
        ack = ack_of(exchange(zcoder_py.socket_path, frame(encode_flat_object(task))))
        assert ack["status"] == "accepted"
        claimed = zcoder_py.claim_one()
        assert isinstance(claimed, ClaimedMessage)
        before = len(peer.requests)
        assert zcoder_py.send_progress(claimed.envelope, "started") == "unsupported"
        assert zcoder_py.send_progress(claimed.envelope, "steered") == "receiptless"
        assert zcoder_py.send_receipt(claimed.envelope, "completed", "ok") == "receiptless"
        assert [r["type"] for r in peer.requests[before:]] == ["progress"]  # one exchange
    finally:
        peer.close()


def test_a_steer_as_stored_keeps_its_delivery(make_relay: RelayFactory, tmp_path: Path) -> None:
    alpha, beta = _busy_trusting_pair(make_relay, {}, tmp_path / "home")
    assert alpha.instance_id is not None and alpha.spool is not None
    assert beta.send(alpha.instance_id, "steer me", delivery="steer").delivery == "steer"
    (path,) = (alpha.spool.root / "inbox").iterdir()
    stored = decode_flat_object(path.read_bytes())
    assert stored["delivery"] == "steer" and stored["sender_kind"] == "instance"
