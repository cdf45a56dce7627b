"""Held messages (they wait for the user's decision) take queue places like any other, so
no one sender may hold more than its share: a flood from one sender, however it registers,
leaves room for a trusted peer.

Attack tests: a hostile process registering a new instance id (and claiming a new
workspace) for every message, a relay-only peer, and a loop of `zcoder send` from one
directory each flood a receiver that holds messages by default; a trusted peer's message
is still stored and acknowledged, and each flooder is told why it was refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.relay_peer import run_forger
from tests.relay.conftest import PeerFactory, RelayFactory, trusting_pair, zcoder
from zcoder.relay import ClaimedMessage
from zcoder.relay.held_shares import HELD_SHARE_PER_SENDER, held_quota
from zcoder.relay.scripts import EXIT_FULL

pytestmark = pytest.mark.timeout(120)

QUOTA = held_quota(16)  # ZCODER_RELAY_MAX_QUEUE's default
REASON = (
    f"{QUOTA} messages from this sender already wait for the receiving user's decision; "
    "no more are taken until they are run or discarded"
)


def test_the_quota_is_a_quarter_of_the_queue_and_never_none() -> None:
    assert HELD_SHARE_PER_SENDER == 4
    assert [held_quota(n) for n in (1, 3, 4, 16, 256)] == [1, 1, 1, 4, 64]


def test_one_sender_flooding_held_messages_leaves_room_for_a_trusted_peer(
    make_relay: RelayFactory,
    make_peer: PeerFactory,
    relay_env: dict[str, str],
    registry: Path,
    short_dir: Path,
) -> None:
    # alpha holds every message by default and trusts beta, a live interactive instance.
    alpha, beta = trusting_pair(make_relay, relay_env, short_dir / "home")
    assert alpha.socket_path is not None and alpha.instance_id is not None
    # 1. One process, a new instance id and a new claimed workspace for every message.
    acks = run_forger(short_dir, relay_env, registry, alpha.socket_path, alpha.instance_id,
                      short_dir / "w", count=20, rotate=True)  # fmt: skip
    assert [a["status"] for a in acks] == ["accepted"] * QUOTA + ["full"] * (20 - QUOTA)
    assert {a.get("reason") for a in acks[QUOTA:]} == {REASON}
    # 2. A relay-only peer (a process of its own, one workspace).
    flooder = make_peer("flooder", consume=False)
    sent = [flooder.send(alpha.instance_id, f"spam {n}") for n in range(QUOTA + 2)]
    assert [s["status"] for s in sent] == ["accepted"] * QUOTA + ["full"] * 2
    assert sent[-1]["text"] == f"alpha did not accept the message: {REASON}"
    # 3. `zcoder send` in a loop from one directory: a new process each time, one place.
    scripts = short_dir / "scripts"
    scripts.mkdir()
    codes = [zcoder(relay_env, "send", "alpha", f"loop {n}", cwd=scripts).returncode
             for n in range(QUOTA + 1)]  # fmt: skip
    assert codes == [0] * QUOTA + [EXIT_FULL]
    assert alpha.status().held == 3 * QUOTA  # no flooder got more than its share
    # The trusted peer's message is stored and acknowledged, and runs.
    result = beta.send(alpha.instance_id, "the real task")
    assert result.status == "accepted", result.text
    claimed = alpha.claim_one()
    assert isinstance(claimed, ClaimedMessage) and claimed.envelope.body == "the real task"
    alpha.complete(claimed)
    # A share frees as the user decides: one run (released to the queue), one discarded.
    mine = [m for m in alpha.held() if isinstance(m, ClaimedMessage)
            and m.envelope.sender_pid == flooder.pid]  # fmt: skip
    assert len(mine) == QUOTA
    assert alpha.release(mine[0].path.name) and alpha.discard(mine[1].path.name)
    again = [flooder.send(alpha.instance_id, f"more {n}")["status"] for n in range(3)]
    assert again == ["accepted", "accepted", "full"]
