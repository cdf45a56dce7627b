"""Queue semantics: FIFO, duplicates, limits, pause, claims, quarantine, sender checks."""

from __future__ import annotations

import json
import os
import shutil
import threading

import pytest

from tests.relay.wire import enqueue_obj, exchange, frame, own_id, send_json
from zcoder.relay import ClaimedMessage, QuarantinedMessage

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def pair(make_relay):
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    assert receiver.available and sender.available
    return receiver, sender


def _enqueue(receiver, sender, message_id, body="task"):
    return send_json(receiver.socket_path, enqueue_obj(receiver, sender, message_id, body))


def _run_all(receiver) -> list[str]:
    """Claim and complete every queued message, as the agent would: their bodies in order."""
    bodies = []
    while (claimed := receiver.claim_one()) is not None:
        assert isinstance(claimed, ClaimedMessage)
        bodies.append(claimed.envelope.body)
        receiver.complete(claimed)
    return bodies


def test_busy_receiver_accepts_then_processes_fifo(pair):
    receiver, sender = pair
    receiver.set_state("busy")
    positions = [_enqueue(receiver, sender, f"m-{n}", f"task {n}") for n in range(5)]
    assert [a["status"] for a in positions] == ["accepted"] * 5
    assert [a["queue_position"] for a in positions] == [1, 2, 3, 4, 5]
    assert all(a["state"] == "busy" for a in positions)
    receiver.set_state("ready")
    assert _run_all(receiver) == [f"task {n}" for n in range(5)]


def test_spool_names_carry_nine_digit_sequence(pair):
    receiver, sender = pair
    _enqueue(receiver, sender, "seq-a")
    _enqueue(receiver, sender, "seq-b")
    names = sorted(p.name for p in (receiver.spool.root / "inbox").iterdir())
    assert names == [
        f"000000001-{own_id(sender, 'seq-a')}.json",
        f"000000002-{own_id(sender, 'seq-b')}.json",
    ]
    assert oct(os.lstat(receiver.spool.root / "inbox" / names[0]).st_mode & 0o777) == "0o600"


def test_duplicate_message_id_executes_at_most_once(pair):
    receiver, sender = pair
    assert _enqueue(receiver, sender, "dup-1")["status"] == "accepted"
    assert _enqueue(receiver, sender, "dup-1")["status"] == "duplicate"
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert _enqueue(receiver, sender, "dup-1")["status"] == "duplicate"  # while processing
    receiver.complete(claimed)
    assert _enqueue(receiver, sender, "dup-1")["status"] == "duplicate"  # after done
    assert receiver.claim_one() is None
    assert (receiver.spool.root / "done" / claimed.path.name).stat().st_size == 0


def test_exact_id_match_not_suffix(pair):
    receiver, sender = pair
    # <id>-<id>-1 is stored as ...-<id>-<id>-1.json, whose name ends with -<id>-1.json.
    assert _enqueue(receiver, sender, own_id(sender, "1"))["status"] == "accepted"
    assert _enqueue(receiver, sender, "1")["status"] == "accepted"


def test_queue_limit_answers_full_and_frees_on_complete(make_relay, relay_env):
    env = {**relay_env, "ZCODER_RELAY_MAX_QUEUE": "3"}
    receiver = make_relay("receiver", env=env)
    sender = make_relay("sender", env=env)
    assert [_enqueue(receiver, sender, f"q-{n}")["status"] for n in range(4)] == [
        "accepted",
        "accepted",
        "accepted",
        "full",
    ]
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert _enqueue(receiver, sender, "q-5")["status"] == "full"  # processing still counts
    receiver.complete(claimed)
    assert _enqueue(receiver, sender, "q-6")["status"] == "accepted"


def test_pause_rejects_new_keeps_queued_and_resume_continues_fifo(pair):
    receiver, sender = pair
    _enqueue(receiver, sender, "before-1", "first")
    receiver.pause()
    ack = _enqueue(receiver, sender, "during-1")
    assert (ack["status"], ack["state"]) == ("paused", "paused")
    ping = send_json(
        receiver.socket_path,
        {
            "protocol": 1,
            "type": "ping",
            "message_id": "p",
            "target_instance_id": receiver.instance_id,
        },
    )
    assert (ping["status"], ping["state"]) == ("pong", "paused")
    receiver.resume()
    _enqueue(receiver, sender, "after-1", "second")
    assert _run_all(receiver) == ["first", "second"]


def test_paused_claims_nothing_until_resume(pair):
    receiver, sender = pair
    _enqueue(receiver, sender, "held-1", "first")
    _enqueue(receiver, sender, "held-2", "second")
    receiver.pause()
    assert receiver.claim_one() is None  # accepted messages wait while paused
    assert receiver.status().queued == 2
    receiver.resume()
    assert _run_all(receiver) == ["first", "second"]


def test_paused_from_setting_starts_paused(make_relay, relay_env):
    receiver = make_relay("receiver", env={**relay_env, "ZCODER_RELAY": "paused"})
    sender = make_relay("sender")
    assert receiver.status().state == "paused"
    assert _enqueue(receiver, sender, "x-1")["status"] == "paused"


def test_duplicate_wins_over_paused_and_full(make_relay, relay_env):
    env = {**relay_env, "ZCODER_RELAY_MAX_QUEUE": "1"}
    receiver = make_relay("receiver", env=env)
    sender = make_relay("sender", env=env)
    assert _enqueue(receiver, sender, "d-1")["status"] == "accepted"
    assert _enqueue(receiver, sender, "d-1")["status"] == "duplicate"  # not full
    receiver.pause()
    assert _enqueue(receiver, sender, "d-1")["status"] == "duplicate"  # not paused


def test_one_message_is_claimed_by_only_one_caller(make_relay, relay_env):
    env = {**relay_env, "ZCODER_RELAY_MAX_QUEUE": "64"}
    receiver = make_relay("receiver", env=env)
    sender = make_relay("sender", env=env)
    for n in range(40):
        assert _enqueue(receiver, sender, f"race-{n}")["status"] == "accepted"
    won: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def claimer() -> None:
        start.wait()
        while (claimed := receiver.spool.claim_one()) is not None:
            assert isinstance(claimed, ClaimedMessage)
            with lock:
                won.append(claimed.envelope.message_id)

    threads = [threading.Thread(target=claimer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == sorted(own_id(sender, f"race-{n}") for n in range(40))


def test_sequences_name_the_oldest_waiting_and_the_last_accepted(pair):
    receiver, sender = pair
    assert (receiver.sequences().oldest_waiting, receiver.sequences().last_accepted) == (None, 0)
    for n in range(3):
        _enqueue(receiver, sender, f"s-{n}", f"task {n}")
    assert (receiver.sequences().oldest_waiting, receiver.sequences().last_accepted) == (1, 3)
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage) and claimed.sequence == 1
    assert receiver.sequences().oldest_waiting == 2  # a claimed message no longer waits
    receiver.complete(claimed)
    receiver.pause()
    assert receiver.claim_one() is None
    assert receiver.sequences().oldest_waiting == 2  # paused, they still wait
    receiver.resume()
    for _ in range(2):
        claimed = receiver.claim_one()
        assert isinstance(claimed, ClaimedMessage)
        receiver.complete(claimed)
    assert (receiver.sequences().oldest_waiting, receiver.sequences().last_accepted) == (None, 3)


def test_sequences_count_a_foreign_inbox_name_that_is_taken_first_as_0(pair):
    receiver, sender = pair
    _enqueue(receiver, sender, "real", "task")
    (receiver.spool.root / "inbox" / "0-junk").write_bytes(b"junk")  # sorts first
    assert receiver.sequences().oldest_waiting == 0
    assert isinstance(receiver.claim_one(), QuarantinedMessage)  # what claim_one takes first
    assert receiver.sequences().oldest_waiting == 1


def test_invalid_spool_entry_is_quarantined_never_returned(pair):
    receiver, sender = pair
    _enqueue(receiver, sender, "good-1", "good")
    inbox = receiver.spool.root / "inbox"
    [name] = [p.name for p in inbox.iterdir()]
    (inbox / name).write_bytes(b"garbage, not JSON")
    result = receiver.claim_one()
    assert isinstance(result, QuarantinedMessage)
    assert "JSON" in result.reason
    assert (receiver.spool.root / "rejected" / name).exists()
    assert receiver.claim_one() is None


def test_symlinked_spool_entry_is_quarantined(pair, short_dir):
    receiver, sender = pair
    _enqueue(receiver, sender, "link-1")
    inbox = receiver.spool.root / "inbox"
    [entry] = list(inbox.iterdir())
    secret = short_dir / "secret.json"
    secret.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(secret)
    result = receiver.claim_one()
    assert isinstance(result, QuarantinedMessage)
    assert "safely" in result.reason
    assert secret.exists()  # the link's target is untouched
    assert (receiver.spool.root / "rejected" / entry.name).is_symlink()


def test_spool_entry_for_another_target_is_quarantined(pair):
    receiver, sender = pair
    payload = json.dumps(enqueue_obj(receiver, sender, "tt-1", target_instance_id="1-1")).encode()
    (receiver.spool.root / "inbox" / f"000000099-{own_id(sender, 'tt-1')}.json").write_bytes(
        payload
    )
    result = receiver.claim_one()
    assert isinstance(result, QuarantinedMessage)
    assert "another instance" in result.reason


def test_sender_without_manifest_is_invalid(pair):
    receiver, _ = pair
    obj = enqueue_obj(receiver, receiver, "f-1")
    forged = f"{os.getpid()}-123456"  # no such manifest
    obj.update(sender_instance_id=forged, message_id=f"{forged}-1")
    assert send_json(receiver.socket_path, obj)["status"] == "invalid"
    assert receiver.claim_one() is None


def test_sender_pid_must_prefix_sender_id(pair):
    receiver, sender = pair
    obj = enqueue_obj(receiver, sender, "f-2", sender_pid=os.getpid() + 1)
    assert send_json(receiver.socket_path, obj)["status"] == "invalid"


def test_sender_manifest_with_other_pid_is_invalid(pair, registry):
    receiver, sender = pair
    manifest = registry / f"a-{sender.instance_id}.json"
    data = json.loads(manifest.read_text())
    data["pid"] = 1
    manifest.write_text(json.dumps(data))
    assert _enqueue(receiver, sender, "f-3")["status"] == "invalid"


def test_connecting_process_must_be_sender_or_descendant(pair, make_peer):
    receiver, _ = pair
    peer = make_peer("peer")  # a child of this process, so this process is its ancestor
    obj = enqueue_obj(receiver, receiver, "f-4")
    obj.update(
        sender_instance_id=peer.instance_id,
        sender_pid=peer.pid,
        message_id=f"{peer.instance_id}-4",
    )
    assert send_json(receiver.socket_path, obj)["status"] == "invalid"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("body", ""),
        ("body", 5),
        ("body", None),
        ("sender_pid", "123"),
        ("sender_pid", 0),
        ("sender_pid", True),
        ("sender_project", "p" * 257),
        ("sender_workspace", "w" * 4097),
        ("sender_project", 7),
        ("created_at", "yesterday"),
        ("sender_instance_id", "has space"),
    ],
)
def test_envelope_field_checks(pair, field, value):
    receiver, sender = pair
    obj = enqueue_obj(receiver, sender, "v-1", **{field: value})
    ack = send_json(receiver.socket_path, obj)
    assert (ack["status"], ack["message_id"]) == ("invalid", own_id(sender, "v-1"))


@pytest.mark.parametrize("message_id", ["", "has space", "x" * 101, "semi;colon", "slash/../x", 17])
def test_bad_message_id_is_invalid_with_empty_id(pair, message_id):
    receiver, sender = pair
    obj = enqueue_obj(receiver, sender, "placeholder")
    obj["message_id"] = message_id
    ack = send_json(receiver.socket_path, obj)
    assert (ack["status"], ack["message_id"]) == ("invalid", "")


def test_unknown_extra_fields_are_ignored(pair):
    receiver, sender = pair
    obj = enqueue_obj(receiver, sender, "extra-1", priority="high", version_2_field=None)
    assert send_json(receiver.socket_path, obj)["status"] == "accepted"


def test_failed_store_answers_invalid_and_leaves_no_half_file(pair):
    receiver, sender = pair
    tmp = receiver.spool.root / "tmp"
    shutil.rmtree(tmp)  # the store can neither use a spare file nor create one now
    ack = _enqueue(receiver, sender, "store-1")
    assert ack["status"] == "invalid"
    assert list((receiver.spool.root / "inbox").iterdir()) == []
    tmp.mkdir(mode=0o700)
    assert _enqueue(receiver, sender, "store-1")["status"] == "accepted"  # it was not recorded


def test_accepted_message_nudges_the_foreground_callback(make_relay):
    nudged = threading.Event()
    receiver = make_relay("receiver", on_message=nudged.set)
    sender = make_relay("sender")
    assert _enqueue(receiver, sender, "n-1")["status"] == "accepted"
    assert nudged.wait(5)


def test_raw_frame_with_leading_zero_length(pair):
    receiver, sender = pair
    payload = json.dumps(enqueue_obj(receiver, sender, "z-1")).encode()
    raw = b"ZCODER-AGENT/1 00" + str(len(payload)).encode() + b"\n" + payload
    assert exchange(receiver.socket_path, raw).startswith(b"ZCODER-AGENT/1 ")
    assert receiver.claim_one() is not None
    assert frame(b"x").startswith(b"ZCODER-AGENT/1 1\n")


def test_queue_limit_is_rechecked_on_disk_before_answering_full(make_relay, relay_env):
    env = {**relay_env, "ZCODER_RELAY_MAX_QUEUE": "2"}
    receiver = make_relay("receiver", env=env)
    sender = make_relay("sender", env=env)
    assert _enqueue(receiver, sender, "r-1")["status"] == "accepted"
    assert _enqueue(receiver, sender, "r-2")["status"] == "accepted"
    assert _enqueue(receiver, sender, "r-3")["status"] == "full"
    # An entry that vanished behind the spool's back no longer holds a slot.
    [first, _] = sorted((receiver.spool.root / "inbox").iterdir())
    first.unlink()
    ack = _enqueue(receiver, sender, "r-4")
    assert ack["status"] == "accepted" and ack["queue_position"] == 2
    assert receiver.spool.queued() == 2


def test_queue_position_counts_claimed_and_frees_on_quarantine(pair):
    receiver, sender = pair
    assert _enqueue(receiver, sender, "s-1")["queue_position"] == 1
    [entry] = list((receiver.spool.root / "inbox").iterdir())
    entry.write_bytes(b"garbage, not JSON")
    assert isinstance(receiver.claim_one(), QuarantinedMessage)
    assert _enqueue(receiver, sender, "s-2")["queue_position"] == 1
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert _enqueue(receiver, sender, "s-3")["queue_position"] == 2  # processing counts
    receiver.complete(claimed)
    assert _enqueue(receiver, sender, "s-4")["queue_position"] == 2


def test_sender_manifest_changed_after_an_accepted_enqueue_is_checked_again(pair, registry):
    receiver, sender = pair
    manifest = registry / f"a-{sender.instance_id}.json"
    original = manifest.read_bytes()
    assert _enqueue(receiver, sender, "c-1")["status"] == "accepted"  # the check is cached
    data = json.loads(original)
    data["pid"] = 1
    manifest.write_text(json.dumps(data, separators=(",", ":")))  # rewritten in place
    assert _enqueue(receiver, sender, "c-2")["status"] == "invalid"
    manifest.write_bytes(original)
    assert _enqueue(receiver, sender, "c-3")["status"] == "accepted"
    manifest.unlink()
    assert _enqueue(receiver, sender, "c-4")["status"] == "invalid"
    target = registry.parent / "elsewhere.json"
    target.write_bytes(original)
    manifest.symlink_to(target)
    assert _enqueue(receiver, sender, "c-5")["status"] == "invalid"
    manifest.unlink()
    manifest.write_bytes(original)
    os.chmod(manifest, 0o600)
    assert _enqueue(receiver, sender, "c-6")["status"] == "accepted"
