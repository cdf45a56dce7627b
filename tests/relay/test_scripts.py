"""`zcoder agents` and `zcoder send`, run as the commands a script would run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.relay.conftest import PeerFactory, RelayFactory, zcoder
from zcoder.relay import ClaimedMessage


def test_agents_lists_live_instances_as_a_table_and_as_json(
    make_peer: PeerFactory, relay_env: dict[str, str], registry: Path
) -> None:
    peer = make_peer("backend", consume=False)
    before = sorted(p.name for p in registry.iterdir())
    table = zcoder(relay_env, "agents")
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith("NAME") and peer.instance_id in table.stdout
    listed = zcoder(relay_env, "agents", "--json")
    assert listed.returncode == 0
    (record,) = json.loads(listed.stdout)
    assert record["instance_id"] == peer.instance_id and record["name"] == "backend"
    # Discovery only: nothing was published or left behind.
    assert sorted(p.name for p in registry.iterdir()) == before


def test_agents_with_no_registry_yet_lists_nobody_and_creates_nothing(
    relay_env: dict[str, str], registry: Path
) -> None:
    assert not registry.exists()
    listed = zcoder(relay_env, "agents", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    assert not registry.exists()


def test_send_delivers_by_name_and_exits_0(
    make_relay: RelayFactory, relay_env: dict[str, str], registry: Path
) -> None:
    receiver = make_relay("receiver")
    sent = zcoder(relay_env, "send", "receiver", "run the tests please")
    assert sent.returncode == 0, sent.stderr
    assert "accepted" in sent.stdout
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert claimed.envelope.body == "run the tests please"
    # The short-lived sender removed its files.
    assert sorted(p.name for p in registry.glob("a-*")) == sorted(
        p.name for p in registry.glob(f"a-{receiver.instance_id}.*")
    )


def test_send_reads_the_message_from_stdin_and_reports_json(
    make_relay: RelayFactory, relay_env: dict[str, str]
) -> None:
    receiver = make_relay("receiver")
    assert receiver.instance_id is not None
    sent = zcoder(relay_env, "send", receiver.instance_id, "--json", stdin="line one\nline two\n")
    assert sent.returncode == 0, sent.stderr
    result = json.loads(sent.stdout)
    assert result["status"] == "accepted" and result["target"] == receiver.instance_id
    claimed = receiver.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert claimed.envelope.body == "line one\nline two\n"


def test_send_exit_codes_say_what_happened(
    make_relay: RelayFactory, relay_env: dict[str, str], short_dir: Path
) -> None:
    paused = make_relay("sleepy")
    paused.pause()
    assert zcoder(relay_env, "send", "sleepy", "hi").returncode == 4
    assert zcoder(relay_env, "send", "nobody-here", "hi").returncode == 3
    assert zcoder(relay_env, "send", "sleepy", "   ").returncode == 2
    # Two live instances with one name: ambiguous, nothing sent, candidates listed.
    for place in ("x", "y"):
        (short_dir / place).mkdir()
    twin_a = make_relay("x/twin")
    twin_b = make_relay("y/twin")
    ambiguous = zcoder(relay_env, "send", "twin", "hi")
    assert ambiguous.returncode == 3
    assert "ambiguous" in ambiguous.stderr
    assert str(twin_a.instance_id) in ambiguous.stderr
    assert str(twin_b.instance_id) in ambiguous.stderr
    assert twin_a.claim_one() is None and twin_b.claim_one() is None


def test_send_to_a_full_queue_exits_5(make_relay: RelayFactory, relay_env: dict[str, str]) -> None:
    make_relay("busy", env={**relay_env, "ZCODER_RELAY_MAX_QUEUE": "1"})
    assert zcoder(relay_env, "send", "busy", "first").returncode == 0
    full = zcoder(relay_env, "send", "busy", "second")
    assert full.returncode == 5, full.stderr
    assert "full" in full.stderr


def test_send_answers_with_the_name_the_user_typed_and_agents_lists(
    make_relay: RelayFactory, relay_env: dict[str, str]
) -> None:
    receiver = make_relay("gamma")  # project gamma...
    receiver.refresh_manifest(name="gam")  # ...named gam
    listed = json.loads(zcoder(relay_env, "agents", "--json").stdout)
    assert [(r["name"], r["project"]) for r in listed] == [("gam", "gamma")]
    sent = zcoder(relay_env, "send", "gam", "hello")
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout == (
        f"Message accepted by gam ({receiver.instance_id}); queued at position 1. "
        "Delivery does not imply task completion.\n"
    )
    receiver.pause()
    paused = zcoder(relay_env, "send", "gam", "again")
    assert (paused.returncode, paused.stderr) == (
        4,
        "gam is paused and did not accept the message\n",
    )
