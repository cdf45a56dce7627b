"""Dead instances' registry files are swept; live ones, foreign ones and junk are not.

Real relay-only peers (separate processes) are killed with SIGKILL, as a crash would, and a
new instance starting in the same registry sweeps. The lock files of the killed peers are
made older than MIN_LOCK_AGE_SECONDS with utime instead of sleeping.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from pathlib import Path

import pytest

from tests.relay.conftest import PeerFactory, RelayFactory
from zcoder.relay import ClaimedMessage, Relay
from zcoder.relay.client import discover
from zcoder.relay.registry import MAX_MANIFESTS_EXAMINED
from zcoder.relay.sweep import (
    MIN_LOCK_AGE_SECONDS,
    SPOOL_GRACE_SECONDS,
    forget_leftover,
    parse_lock_record,
    sweep_dead_instances,
)


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def _files_of(registry: Path, instance_id: str) -> list[str]:
    return sorted(p.name for p in registry.glob(f"a-{instance_id}.*"))


def _killed(
    make_peer: PeerFactory,
    name: str,
    registry: Path,
    sender: Relay | None = None,
    bodies: tuple[str, ...] = (),
) -> tuple[str, dict[str, object]]:
    """A peer killed as a crash would (after ``sender`` queued ``bodies`` to it, unrun), its
    lock made older than MIN_LOCK_AGE_SECONDS: its id and what its lock said."""
    peer = make_peer(name, consume=False)
    instance_id = peer.instance_id
    for body in bodies:
        assert sender is not None and sender.send(instance_id, body).status == "accepted"
    lock = registry / f"a-{instance_id}.lock"
    record = json.loads(lock.read_text())
    peer.kill()
    peer.proc.wait(10)
    _age(lock, MIN_LOCK_AGE_SECONDS + 5)
    return instance_id, record


def test_an_instance_writes_who_it_is_and_where_its_spool_is_in_its_lock(
    make_relay: RelayFactory, registry: Path
) -> None:
    relay = make_relay("alpha")
    assert relay.instance_id is not None and relay.spool is not None
    data = (registry / f"a-{relay.instance_id}.lock").read_bytes()
    record = parse_lock_record(data, relay.instance_id)
    assert record is not None
    assert record.pid == os.getpid()
    assert record.workspace == str(relay.workspace)
    assert Path(record.runtime) / "relay" == relay.spool.root


def test_a_starting_instance_removes_a_killed_instances_files_and_empty_spool(
    make_peer: PeerFactory, make_relay: RelayFactory, registry: Path
) -> None:
    dead_id, record = _killed(make_peer, "dead", registry)
    assert _files_of(registry, dead_id) == [f"a-{dead_id}.{k}" for k in ("json", "lock", "sock")]
    runtime = Path(str(record["runtime"]))
    assert (runtime / "relay" / "inbox").is_dir()

    relay = make_relay("alpha")
    assert dead_id in relay.sweep.removed
    assert _files_of(registry, dead_id) == []
    assert not runtime.exists()
    assert relay.sweep.leftovers == []


def test_the_sweep_never_touches_a_live_instance(
    make_peer: PeerFactory, make_relay: RelayFactory, registry: Path
) -> None:
    live = make_peer("live", consume=False)
    lock = registry / f"a-{live.instance_id}.lock"
    _age(lock, 3600)  # old, but held
    before = _files_of(registry, live.instance_id)
    relay = make_relay("alpha")
    assert live.instance_id not in relay.sweep.removed
    assert _files_of(registry, live.instance_id) == before
    assert relay.sweep.problems == []
    found = relay.discover()
    assert [peer.instance_id for peer in found.peers] == [live.instance_id]


def test_a_young_lock_is_left_alone_even_if_not_held(registry: Path, short_dir: Path) -> None:
    registry.mkdir(mode=0o700)
    lock = registry / "a-77-1.lock"
    lock.write_text("77\n")
    result = sweep_dead_instances(registry)
    assert lock.exists() and result.removed == []
    result = sweep_dead_instances(registry, now=time.time() + MIN_LOCK_AGE_SECONDS + 1)
    assert result.removed == ["77-1"] and not lock.exists()


def test_instances_without_a_lock_file_are_never_swept(registry: Path) -> None:
    """zcoder.zsh writes no lock file: nothing proves its instances dead."""
    registry.mkdir(mode=0o700)
    manifest = registry / "a-1700000000123-4.json"
    manifest.write_text('{"protocol":1}')
    manifest.chmod(0o600)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(registry / "a-1700000000123-4.sock"))
    srv.close()  # a dead zsh instance's socket file
    result = sweep_dead_instances(registry, now=time.time() + 3600)
    assert result.removed == []
    assert manifest.exists() and (registry / "a-1700000000123-4.sock").exists()


@pytest.mark.parametrize("kind", ["symlink", "directory", "bad-name", "fifo"])
def test_odd_lock_entries_are_not_followed_nor_removed(
    registry: Path, short_dir: Path, kind: str
) -> None:
    registry.mkdir(mode=0o700)
    victim = short_dir / "victim"
    victim.write_text("keep me")
    name = "a-5-5.lock"
    if kind == "symlink":
        (registry / name).symlink_to(victim)
    elif kind == "directory":
        (registry / name).mkdir()
    elif kind == "fifo":
        os.mkfifo(registry / name, 0o600)
    else:
        name = "a-bad name.lock"
        (registry / name).write_text("")
    # A manifest the odd lock would "prove" dead stays too.
    (registry / "a-5-5.json").write_text("{}")
    result = sweep_dead_instances(registry, now=time.time() + 3600)
    assert result.removed == []
    assert os.path.lexists(registry / name)
    assert (registry / "a-5-5.json").exists()
    assert victim.read_text() == "keep me"


def test_a_dead_instances_unrun_messages_are_kept_for_recovery_then_expire(
    make_peer: PeerFactory, make_relay: RelayFactory, registry: Path
) -> None:
    tasks = tuple(f"task {n}" for n in range(3))
    dead_id, record = _killed(make_peer, "busy", registry, make_relay("sender"), tasks)

    relay = make_relay("alpha")
    assert dead_id not in relay.sweep.removed
    (leftover,) = relay.sweep.leftovers
    assert leftover.instance_id == dead_id and leftover.messages == 3
    assert leftover.workspace == record["workspace"]
    # The manifest and socket went; the lock file stays as the pointer to the spool.
    assert _files_of(registry, dead_id) == [f"a-{dead_id}.lock"]
    assert len(list((leftover.spool / "inbox").iterdir())) == 3

    # Another start within the grace period finds them again.
    again = sweep_dead_instances(registry)
    assert [left.instance_id for left in again.leftovers] == [dead_id]

    # After the grace period without activity, they go.
    later = sweep_dead_instances(registry, now=time.time() + SPOOL_GRACE_SECONDS + 60)
    assert later.removed == [dead_id]
    assert _files_of(registry, dead_id) == [] and not leftover.spool.exists()


def test_forgetting_a_leftover_removes_its_spool_and_lock(
    make_peer: PeerFactory, make_relay: RelayFactory, registry: Path
) -> None:
    dead_id, _ = _killed(make_peer, "busy", registry, make_relay("sender"), ("task",))
    (leftover,) = sweep_dead_instances(registry).leftovers
    forget_leftover(registry, leftover)
    assert _files_of(registry, dead_id) == []
    assert not leftover.spool.parent.exists()


def test_a_lock_naming_a_foreign_directory_as_its_spool_removes_nothing_there(
    registry: Path, short_dir: Path
) -> None:
    """A tampered lock record cannot make the sweep delete an arbitrary directory."""
    registry.mkdir(mode=0o700)
    precious = short_dir / "precious"
    (precious / "relay" / "inbox").mkdir(parents=True)
    (precious / "relay" / "inbox" / "000000001-x-1.json").write_text("{}")
    lock = registry / "a-66-1.lock"
    lock.write_text(
        json.dumps({"instance_id": "66-1", "pid": 66, "workspace": "/w", "runtime": str(precious)})
    )
    result = sweep_dead_instances(registry, now=time.time() + SPOOL_GRACE_SECONDS + 60)
    assert result.removed == ["66-1"] and result.leftovers == []
    assert (precious / "relay" / "inbox" / "000000001-x-1.json").exists()


def test_junk_manifests_cannot_hide_a_live_peer(
    make_peer: PeerFactory, make_relay: RelayFactory, registry: Path
) -> None:
    live = make_peer("live", consume=False)
    # Grammar-valid junk, newer than the live manifest, more than the discovery bound.
    for n in range(MAX_MANIFESTS_EXAMINED + 10):
        junk = registry / f"a-9{n:04d}-1.json"
        junk.write_text("{}")
        junk.chmod(0o600)
    caller = make_relay("caller")
    found = discover(registry, self_instance_id=caller.instance_id, timeout=5)
    assert live.instance_id in [peer.instance_id for peer in found.peers]


def test_thousands_of_other_files_cannot_hide_a_live_peer(
    make_peer: PeerFactory, make_relay: RelayFactory, registry: Path
) -> None:
    live = make_peer("live", consume=False)
    for n in range(5000):
        (registry / f"junk-{n}").write_bytes(b"")
    caller = make_relay("caller")
    found = discover(registry, self_instance_id=caller.instance_id, timeout=5)
    assert [peer.instance_id for peer in found.peers] == [live.instance_id]


def test_swept_files_are_checked_for_type(registry: Path) -> None:
    """A dead instance's 'socket' that is a regular file is not removed as its socket."""
    registry.mkdir(mode=0o700)
    (registry / "a-8-1.lock").write_text("8\n")
    fake_socket = registry / "a-8-1.sock"
    fake_socket.write_text("not a socket")
    result = sweep_dead_instances(registry, now=time.time() + 3600)
    assert result.removed == []
    assert fake_socket.exists()
    assert any("a-8-1.lock" in problem for problem in result.problems)
    assert stat.S_ISREG(os.lstat(registry / "a-8-1.lock").st_mode)


def test_a_crashed_instances_unrun_messages_are_recovered_in_order_by_the_next_one_here(
    make_peer: PeerFactory, make_relay: RelayFactory, registry: Path
) -> None:
    sender = make_relay("sender")
    crashed_id, _ = _killed(make_peer, "proj", registry, sender, ("one", "two", "three"))

    elsewhere = make_relay("other-project")
    assert elsewhere.leftovers() == []  # only the same workspace is offered them
    successor = make_relay("proj")
    (leftover,) = successor.leftovers()
    queued, problems = successor.recover(leftover)
    assert (queued, problems) == (3, [])
    bodies = []
    while (claimed := successor.claim_one()) is not None:
        assert isinstance(claimed, ClaimedMessage)
        assert claimed.envelope.sender_instance_id == sender.instance_id
        bodies.append(claimed.envelope.body)
        successor.complete(claimed)
    assert bodies == ["one", "two", "three"]
    assert not leftover.spool.exists()
    assert _files_of(registry, crashed_id) == []
    assert successor.leftovers() == []


def test_a_tampered_leftover_entry_is_not_recovered(
    make_peer: PeerFactory, make_relay: RelayFactory, registry: Path
) -> None:
    _killed(make_peer, "proj", registry, make_relay("sender"), ("real",))
    successor_probe = sweep_dead_instances(registry)
    (leftover,) = successor_probe.leftovers
    (leftover.spool / "inbox" / "000000009-9-9-1.json").write_text('{"protocol":1}')
    successor = make_relay("proj")
    (found,) = successor.leftovers()
    queued, problems = successor.recover(found)
    assert queued == 1 and len(problems) == 1
    claimed = successor.claim_one()
    assert isinstance(claimed, ClaimedMessage) and claimed.envelope.body == "real"
