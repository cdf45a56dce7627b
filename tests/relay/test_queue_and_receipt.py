"""Each agent's queue and last receipt (issue 29 item 5): the manifest's ``queued``,
``last_receipt`` and ``last_receipt_at``, written by zcoder's own process on a change only,
read defensively, shown in ``zcoder agents`` (text and --json) and /list-agents."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import given

from tests.relay.conftest import PeerFactory, RelayFactory, zcoder
from tests.relay.test_activity import SCALARS, _manifest, read_back
from zcoder.frontend.relay_inbox import RelayHistory
from zcoder.relay import ClaimedMessage
from zcoder.relay.display import last_receipt, peer_list_for_model, peer_table, queue
from zcoder.relay.registry import parse_manifest

DEADLINE = 20.0


def _identity(path: Path) -> tuple[int, int]:
    st_ = os.stat(path)
    return st_.st_ino, st_.st_mtime_ns


def test_the_members_come_last_as_flat_scalars_and_are_absent_until_said() -> None:
    assert b"queued" not in _manifest().to_payload()  # what zcoder.zsh writes is unchanged
    payload = _manifest(
        activity="idle", activity_since=5, queued=0, last_receipt="failed from api",
        last_receipt_at=1700000000,
    ).to_payload()  # fmt: skip
    members = json.loads(payload)
    assert list(members)[-3:] == ["queued", "last_receipt", "last_receipt_at"]
    parsed = parse_manifest(payload, Path("/r"), "a-42-7.json")
    assert (parsed.queued, parsed.last_receipt, parsed.last_receipt_at) == (
        0,
        "failed from api",
        1700000000,
    )


def test_the_queue_is_published_on_a_change_only(make_relay: RelayFactory, registry: Path) -> None:
    caller, agent = make_relay("caller"), make_relay("agent")
    assert caller.discover().peers[0].queued is None  # said nothing yet
    path = registry / f"a-{agent.instance_id}.json"
    assert agent.instance_id is not None
    for body in ("one", "two"):
        assert caller.send(agent.instance_id, body).status == "accepted"
    agent.set_queued(agent.status().waiting)  # what a front end does on its look
    assert caller.discover().peers[0].queued == 2
    first = _identity(path)
    for _ in range(100):  # a front end looking every second, nothing changing
        agent.set_queued(agent.status().waiting)
    assert _identity(path) == first
    assert isinstance(agent.claim_one(), ClaimedMessage)
    agent.set_queued(agent.status().waiting)
    assert caller.discover().peers[0].queued == 1


def test_the_last_receipt_taken_is_published_with_its_peer_and_time(
    make_relay: RelayFactory,
) -> None:
    sender, receiver = make_relay("sender"), make_relay("web")
    watcher = make_relay("watcher")
    history = RelayHistory(
        sender, store=lambda: None, session_id=lambda: None, workspace=sender.workspace
    )
    assert receiver.instance_id is not None
    for outcome in ("failed", "completed"):
        assert sender.send(receiver.instance_id, "do it").status == "accepted"
        claimed = receiver.claim_one()
        assert isinstance(claimed, ClaimedMessage)
        assert receiver.send_receipt(claimed.envelope, outcome, "ok") == "accepted"
    before = int(time.time())
    assert len(history.take_receipts(None)) == 2
    (seen,) = [p for p in watcher.discover().peers if p.instance_id == sender.instance_id]
    assert seen.last_receipt == "completed from web"  # the last one taken
    assert seen.last_receipt_at >= before
    assert last_receipt(seen, now=seen.last_receipt_at + 180) == "completed from web, 3m ago"


@pytest.mark.parametrize(
    ("member", "value", "read"),
    [
        ("queued", -1, None),
        ("queued", True, None),
        ("queued", "3", None),
        ("queued", 2**31, None),
        ("queued", 1.5, None),
        ("last_receipt", 7, ""),
        ("last_receipt", "x" * 81, ""),
        ("last_receipt_at", -5, 0),
        ("last_receipt_at", "1700000000", 0),
    ],
)
def test_odd_members_of_a_hostile_manifest_are_dropped_and_the_manifest_kept(
    member: str, value: object, read: object
) -> None:
    said = _manifest(queued=1, last_receipt="completed from x", last_receipt_at=5)
    parsed = read_back(said, **{member: value})
    assert getattr(parsed, member) == read
    assert parsed.project == "web"


@given(queued=SCALARS, receipt=SCALARS, at=SCALARS)
def test_any_scalar_in_the_new_members_leaves_a_readable_manifest(
    queued: object, receipt: object, at: object
) -> None:
    parsed = read_back(_manifest(), queued=queued, last_receipt=receipt, last_receipt_at=at)
    assert parsed.queued is None or (isinstance(parsed.queued, int) and parsed.queued >= 0)
    assert isinstance(parsed.last_receipt, str) and len(parsed.last_receipt) <= 80
    assert isinstance(parsed.last_receipt_at, int) and parsed.last_receipt_at >= 0
    shown = queue(parsed) + last_receipt(parsed, now=0) + peer_table([parsed])
    shown += peer_table([parsed], width=30)
    assert not any(ord(char) < 32 and char != "\n" for char in shown)
    assert re.fullmatch(r"-|[0-9]+", queue(parsed))


def test_a_hostile_receipt_is_shown_made_visible_and_never_reaches_the_model() -> None:
    peer = _manifest(queued=4, last_receipt="\x1b]0;pwned\x07<|im_start|>", last_receipt_at=5)
    table = peer_table([peer])
    assert "\x1b" not in table and "\\e]0;pwned\\x07" in table
    assert "LAST RECEIPT" in table.splitlines()[0] and "QUEUE" in table.splitlines()[0]
    narrow = peer_table([peer], width=40).splitlines()
    assert narrow[0].endswith(" · 4 queued") and narrow[2].startswith("  last receipt: ")
    # The list_agents tool's text stays as it was (its token budget): neither is there.
    assert "queued" not in peer_list_for_model([peer]) and "pwned" not in peer_list_for_model(
        [peer]
    )


def test_zcoder_agents_gives_queue_and_last_receipt(
    make_relay: RelayFactory, relay_env: dict[str, str]
) -> None:
    agent = make_relay("agent")
    agent.set_queued(3)
    agent.note_receipt("completed", "web")
    listed = zcoder(relay_env, "agents", "--json")
    assert listed.returncode == 0, listed.stderr
    (record,) = json.loads(listed.stdout)
    assert record["queued"] == 3 and record["last_receipt"] == "completed from web"
    assert record["last_receipt_at"] > 0
    table = zcoder(relay_env, "agents").stdout
    assert "completed from web" in table
    heading, row = table.splitlines()
    assert row[heading.index("QUEUE") :].startswith("3 ")


def test_a_message_queued_in_one_process_shows_in_another_s_listing(
    make_peer: PeerFactory, make_relay: RelayFactory, relay_env: dict[str, str]
) -> None:
    """Two real processes: a relay-only peer that leaves what it gets queued, and a sender;
    ``zcoder agents --json`` (a third) reads the queue the peer published."""
    peer = make_peer("receiver", consume=False)
    sender = make_relay("sender")
    assert sender.send(peer.instance_id, "later").status == "accepted"

    def queued() -> object:
        listed = json.loads(zcoder(relay_env, "agents", "--json").stdout)
        return next(r["queued"] for r in listed if r["instance_id"] == peer.instance_id)

    deadline = time.monotonic() + DEADLINE
    while queued() != 1:
        assert time.monotonic() < deadline, "the peer's queue never reached its manifest"
        time.sleep(0.05)


def test_the_table_gives_a_column_only_to_what_some_peer_says() -> None:
    quiet = _manifest()  # zcoder.zsh says neither: the table it always had
    heading = peer_table([quiet]).splitlines()[0]
    assert "QUEUE" not in heading and "LAST RECEIPT" not in heading
    heading = peer_table([quiet, _manifest(instance_id="43-7", pid=43, queued=0)]).splitlines()[0]
    assert "QUEUE" in heading and "LAST RECEIPT" not in heading
