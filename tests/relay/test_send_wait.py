"""`zcoder send --steer` and `zcoder send --wait`, run as a script runs them, against a
real receiving relay: the ack's word on a steer, the progress lines, one exit code per
outcome."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.far_side import claimed_from
from tests.relay.conftest import PeerFactory, RelayFactory, zcoder
from zcoder.relay import ClaimedMessage
from zcoder.relay.scripts import EXIT_CODES, EXIT_DISCARDED, EXIT_TIMED_OUT, RECEIPT_CODES
from zcoder.relay.trust import TRUST

DEADLINE = 60.0


def _start_send(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "zcoder", "send", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


def _finish(sender: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = sender.communicate(timeout=DEADLINE)
    return sender.returncode, out, err


@pytest.mark.parametrize("outcome", list(RECEIPT_CODES))
def test_send_wait_prints_progress_and_exits_with_the_outcomes_code(
    make_relay: RelayFactory, relay_env: dict[str, str], outcome: str
) -> None:
    receiver = make_relay("receiver")
    sender = _start_send(relay_env, "receiver", "run the tests", "--wait")
    try:
        claimed = claimed_from(receiver, sender)
        assert receiver.send_progress(claimed.envelope, "started") == "accepted"
        assert receiver.send_receipt(claimed.envelope, outcome, "12 passed") == "accepted"
        code, out, err = _finish(sender)
    finally:
        sender.kill()
    assert code == RECEIPT_CODES[outcome], (out, err)
    lines = out.splitlines()
    assert lines[0].startswith("Message accepted by receiver")
    assert lines[1:] == ["started", f"{outcome}: 12 passed"]


def test_the_outcome_codes_are_distinct_and_keep_the_delivery_codes() -> None:
    codes = [*RECEIPT_CODES.values(), EXIT_TIMED_OUT]
    assert len(set(codes)) == len(codes)
    assert set(codes) & set(EXIT_CODES.values()) == {0}  # completed, as accepted, is 0


def test_send_wait_times_out_with_its_own_code(
    make_relay: RelayFactory, relay_env: dict[str, str]
) -> None:
    make_relay("receiver")  # accepts, and never runs it
    sent = zcoder(relay_env, "send", "receiver", "hello", "--wait", "--timeout", "0.3")
    assert sent.returncode == EXIT_TIMED_OUT, sent.stderr
    assert "no receipt before the timeout" in sent.stderr


def test_send_wait_as_json_prints_one_record_a_line(
    make_relay: RelayFactory, relay_env: dict[str, str]
) -> None:
    receiver = make_relay("receiver")
    sender = _start_send(relay_env, "receiver", "hi", "--wait", "--json")
    try:
        claimed = claimed_from(receiver, sender)
        assert receiver.send_progress(claimed.envelope, "steered") == "accepted"
        assert receiver.send_receipt(claimed.envelope, "failed", "no") == "accepted"
        code, out, _ = _finish(sender)
    finally:
        sender.kill()
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0]["status"] == "accepted"
    assert records[1:] == [{"progress": "steered"}, {"outcome": "failed", "summary": "no"}]
    assert code == RECEIPT_CODES["failed"]


def test_timeout_without_wait_is_a_usage_error(relay_env: dict[str, str]) -> None:
    assert zcoder(relay_env, "send", "x", "hi", "--timeout", "3").returncode == 2


def test_a_steer_from_zcoder_send_is_queued_and_the_ack_says_so(
    make_relay: RelayFactory, relay_env: dict[str, str], tmp_path: Path, short_dir: Path
) -> None:
    # The receiver runs a turn and trusts the very directory `zcoder send` runs in: still,
    # a `zcoder send` is no interactive instance, so its steer is queued.
    receiver = make_relay("receiver", home=tmp_path / "home", interactive=True)
    place = short_dir / "trusted-place"
    place.mkdir()
    receiver.trust.set(str(place), TRUST)
    receiver.set_state("busy")
    sent = zcoder(relay_env, "send", "receiver", "steer me", "--steer", cwd=place)
    assert sent.returncode == 0, sent.stderr
    assert "not steered" in sent.stdout and "queued at position 1" in sent.stdout
    assert receiver.claim_steers() == []
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage) and claimed.envelope.sender_kind == "send"


def test_send_wait_ends_when_the_receiver_is_killed_before_a_receipt(
    make_peer: PeerFactory, relay_env: dict[str, str]
) -> None:
    peer = make_peer("receiver", consume=False)
    sender = _start_send(relay_env, "receiver", "hello", "--wait")
    try:
        deadline = time.monotonic() + DEADLINE
        while True:
            peer.command("claim")
            if peer.wait_for("received", "info", timeout=DEADLINE)["event"] == "received":
                break
            assert time.monotonic() < deadline and sender.poll() is None
            time.sleep(0.02)
        peer.kill()  # kill -9: no discarded receipt can be sent
        code, _, err = _finish(sender)
    finally:
        sender.kill()
    assert code == EXIT_DISCARDED and "gone without a receipt" in err
