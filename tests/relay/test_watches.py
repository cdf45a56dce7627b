"""Watches between real relays: one notice when the peer is next idle, unforgeable,
bounded, dropped when either side goes, and one `unsupported` from zcoder.zsh."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.relay.conftest import PeerFactory, RelayFactory, write_manifest
from tests.relay.test_receipts import ZshShapedPeer
from tests.relay.wire import send_json
from zcoder.relay import ClaimedMessage, Relay
from zcoder.relay.notifier import IdleNotifier
from zcoder.relay.watches import (
    MAX_WATCHES,
    MAX_WATCHES_PER_WATCHER,
    WATCH_MAX_AGE,
    Watch,
    WatchBook,
)
from zcoder.relay.watching import GONE, IDLE, TIMEOUT

WAIT = 30.0  # a deadline for what must happen, never a sleep


def _watch_json(watcher: Relay, target: Relay, n: int, **over: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "protocol": 1,
        "type": "watch",
        "message_id": f"{watcher.instance_id}-t{n}",
        "target_instance_id": target.instance_id,
        "sender_instance_id": watcher.instance_id,
        "sender_pid": os.getpid(),
    }
    obj.update(over)
    return obj


def _idle_json(sender: Relay, target: Relay, in_reply_to: str, n: int = 1) -> dict[str, Any]:
    return {
        "protocol": 1,
        "type": "idle",
        "message_id": f"{sender.instance_id}-i{n}",
        "target_instance_id": target.instance_id,
        "sender_instance_id": sender.instance_id,
        "sender_pid": os.getpid(),
        "in_reply_to": in_reply_to,
    }


def test_a_watch_on_a_busy_peer_fires_once_when_it_goes_idle(make_relay: RelayFactory) -> None:
    alpha, beta = make_relay("alpha"), make_relay("beta")
    assert beta.instance_id is not None
    beta.set_state("busy")
    result = alpha.watch(beta.instance_id)
    assert result.status == "accepted", result.text
    assert alpha.wait_idle(result, 0.3) == TIMEOUT  # busy: no notice
    beta.set_state("ready")
    assert alpha.wait_idle(result, WAIT) == IDLE
    ((notice, sent),) = alpha.take_idle_notices()
    assert notice.in_reply_to == result.message_id
    assert notice.sender_instance_id == beta.instance_id and sent.target_label == "beta"
    # Idle again with a second watch: that one fires, the first never again.
    beta.set_state("busy")
    second = alpha.watch(beta.instance_id)
    beta.set_state("ready")
    assert alpha.wait_idle(second, WAIT) == IDLE
    assert [n.in_reply_to for n, _ in alpha.take_idle_notices()] == [second.message_id]


def test_a_watch_on_an_idle_peer_fires_at_once(make_relay: RelayFactory) -> None:
    alpha, beta = make_relay("alpha"), make_relay("beta")
    assert beta.instance_id is not None
    result = alpha.watch(beta.instance_id)
    assert result.accepted, result.text
    assert alpha.wait_idle(result, WAIT) == IDLE


def test_a_queued_message_keeps_the_peer_from_idle_until_it_is_done(
    make_relay: RelayFactory,
) -> None:
    alpha, beta = make_relay("alpha"), make_relay("beta")
    assert beta.instance_id is not None
    assert alpha.send(beta.instance_id, "a task").status == "accepted"
    result = alpha.watch(beta.instance_id)  # ready, but one message queued: not idle
    assert alpha.wait_idle(result, 0.3) == TIMEOUT
    claimed = beta.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    assert alpha.wait_idle(result, 0.2) == TIMEOUT  # running it
    beta.complete(claimed)  # its state never left ready: the empty queue is the moment
    assert alpha.wait_idle(result, WAIT) == IDLE


def test_a_busy_peer_with_an_empty_queue_is_idle_once_ready(make_relay: RelayFactory) -> None:
    alpha, beta = make_relay("alpha"), make_relay("beta")
    assert beta.instance_id is not None
    beta.set_state("busy")
    result = alpha.watch(beta.instance_id)
    assert alpha.wait_idle(result, 0.2) == TIMEOUT
    beta.pause()  # paused is not idle either
    beta.set_state("ready")
    assert alpha.wait_idle(result, 0.2) == TIMEOUT
    beta.resume()
    assert alpha.wait_idle(result, WAIT) == IDLE


def test_forged_idle_notices_are_refused(make_relay: RelayFactory) -> None:
    alpha, beta, other = make_relay("alpha"), make_relay("beta"), make_relay("other")
    assert alpha.socket_path is not None and beta.instance_id is not None
    beta.set_state("busy")
    result = alpha.watch(beta.instance_id)
    assert result.message_id is not None
    # No watch was ever sent with this id.
    invented = _idle_json(beta, alpha, f"{alpha.instance_id}-w999")
    assert send_json(alpha.socket_path, invented)["status"] == "invalid"
    # The watch went to beta, not to other.
    assert send_json(alpha.socket_path, _idle_json(other, alpha, result.message_id))["status"] == (
        "invalid"
    )
    assert alpha.take_idle_notices() == []
    # beta's own notice is taken once; the same one again is a duplicate, another invalid.
    real = _idle_json(beta, alpha, result.message_id, n=50)
    assert send_json(alpha.socket_path, real)["status"] == "accepted"
    assert send_json(alpha.socket_path, real)["status"] == "duplicate"
    again = _idle_json(beta, alpha, result.message_id, n=51)
    assert send_json(alpha.socket_path, again)["status"] == "invalid"
    assert len(alpha.take_idle_notices()) == 1


def test_watches_are_bounded_per_watcher_with_a_clear_full(make_relay: RelayFactory) -> None:
    alpha, beta, gamma = make_relay("alpha"), make_relay("beta"), make_relay("gamma")
    assert beta.socket_path is not None
    beta.set_state("busy")
    for n in range(MAX_WATCHES_PER_WATCHER):
        assert send_json(beta.socket_path, _watch_json(alpha, beta, n))["status"] == "accepted"
    assert send_json(beta.socket_path, _watch_json(alpha, beta, 0))["status"] == "duplicate"
    over = send_json(beta.socket_path, _watch_json(alpha, beta, 99))
    assert over["status"] == "full"
    assert send_json(beta.socket_path, _watch_json(gamma, beta, 1))["status"] == "accepted"
    assert beta.instance_id is not None
    refused = alpha.watch(beta.instance_id)
    assert refused.status == "full" and "too many watches" in refused.text


def _watch(n: int, watcher: str = "1-1") -> Watch:
    return Watch(f"{watcher}-w{n}", "2-2", watcher, 1)


def test_a_watch_expires_after_twelve_hours_and_dead_watchers_make_room() -> None:
    now = [1000.0]
    alive = {"1-1": True}
    book = WatchBook(lambda w: alive.get(w.sender_instance_id, False), clock=lambda: now[0])
    assert book.add(_watch(1)) == ("accepted", "")
    now[0] += WATCH_MAX_AGE - 1
    assert len(book) == 1
    now[0] += 2
    assert len(book) == 0 and book.take_all() == []
    watchers = [f"{n + 10}-{n}" for n in range(MAX_WATCHES // MAX_WATCHES_PER_WATCHER)]
    for watcher in watchers:
        alive[watcher] = True
        for n in range(MAX_WATCHES_PER_WATCHER):
            assert book.add(_watch(n, watcher))[0] == "accepted"
    assert book.add(_watch(99, watchers[0]))[0] == "full"  # its own share
    assert book.add(_watch(1, "new-1"))[0] == "full"  # everyone's
    alive[watchers[3]] = False  # that watcher is gone: its watches go before `full`
    assert book.add(_watch(1, "new-1"))[0] == "accepted"
    taken = book.take_all()
    assert len(taken) == MAX_WATCHES - MAX_WATCHES_PER_WATCHER + 1
    assert watchers[3] not in {w.sender_instance_id for w in taken}


def test_a_gone_watcher_is_sent_nothing(make_relay: RelayFactory, registry: Path) -> None:
    alpha, beta = make_relay("alpha"), make_relay("beta")
    assert alpha.instance_id is not None and beta.instance_id is not None
    beta.set_state("busy")
    assert alpha.watch(beta.instance_id).accepted
    watch = Watch(f"{alpha.instance_id}-w1", beta.instance_id, alpha.instance_id, os.getpid())
    notifier = IdleNotifier(beta.instance_id, registry, timeout=2, max_bytes=65536)
    alpha.stop()
    assert notifier.send(watch) == "watcher gone"


def test_a_waiter_sees_its_target_go_away(make_relay: RelayFactory, make_peer: PeerFactory) -> None:
    alpha, beta = make_relay("alpha"), make_peer("beta")
    beta.ask("busy", "info")
    result = alpha.watch(beta.instance_id)
    assert result.accepted, result.text
    beta.kill()
    assert alpha.wait_idle(result, WAIT) == GONE


@pytest.fixture
def zsh_peer(registry: Path) -> Iterator[tuple[str, ZshShapedPeer]]:
    """A zcoder.zsh-shaped peer, registered (its id begins with this live process's pid)."""
    registry.mkdir(mode=0o700, exist_ok=True)
    zsh_id = f"{os.getpid()}-1700000000777"
    peer = ZshShapedPeer(registry / f"a-{zsh_id}.sock")
    write_manifest(registry, zsh_id, project="legacy", workspace="/w/legacy")
    yield zsh_id, peer
    peer.close()


def test_zcoder_zsh_answers_unsupported_in_one_exchange(
    make_relay: RelayFactory, zsh_peer: tuple[str, ZshShapedPeer]
) -> None:
    zsh_id, peer = zsh_peer
    alpha = make_relay("alpha")
    result = alpha.watch(zsh_id)
    assert result.status == "unsupported"
    assert "cannot notify" in result.text
    assert [r["type"] for r in peer.requests if r["type"] != "ping"] == ["watch"]
    again = alpha.watch(zsh_id)  # known now: answered here, nothing sent
    assert (again.status, again.text) == (result.status, result.text)
    assert [r["type"] for r in peer.requests if r["type"] != "ping"] == ["watch"]


def test_a_wait_that_closes_a_cycle_of_two_is_refused_naming_it(
    make_relay: RelayFactory,
) -> None:
    alpha, beta = make_relay("alpha"), make_relay("beta")
    assert alpha.instance_id is not None and beta.instance_id is not None
    assert alpha.begin_wait(beta.instance_id) is None
    refused = beta.begin_wait(alpha.instance_id)
    assert refused == "refused: waiting on alpha would close a cycle: beta → alpha → beta"
    alpha.end_wait()
    assert beta.begin_wait(alpha.instance_id) is None  # alpha waits no more


def test_a_wait_that_closes_a_cycle_of_three_is_refused_naming_it(
    make_relay: RelayFactory,
) -> None:
    alpha, beta, gamma = (make_relay(n) for n in ("alpha", "beta", "gamma"))
    assert alpha.instance_id and beta.instance_id and gamma.instance_id
    assert alpha.begin_wait(beta.instance_id) is None
    assert beta.begin_wait(gamma.instance_id) is None
    refused = gamma.begin_wait(alpha.instance_id)
    assert refused == (
        "refused: waiting on alpha would close a cycle: gamma → alpha → beta → gamma"
    )
    # Nothing was left published: alpha can still wait on gamma... which waits on nobody.
    assert gamma.registry is not None
    manifest = (gamma.registry / f"a-{gamma.instance_id}.json").read_text()
    assert "waiting_on" not in manifest


@pytest.mark.parametrize("hops", [1, 2])
def test_a_chain_without_this_instance_is_no_cycle(make_relay: RelayFactory, hops: int) -> None:
    relays = [make_relay(f"r{n}") for n in range(hops + 2)]
    ids = [r.instance_id for r in relays]
    assert all(ids)
    for waiter, target in zip(relays[1:], ids[2:], strict=False):
        assert target is not None
        assert waiter.begin_wait(target) is None
    assert ids[1] is not None
    assert relays[0].begin_wait(ids[1]) is None


class SilentWatcher:
    """A registered watcher (this live process) whose socket takes every connection and
    never answers, until ``release``: what a hung or hostile peer does."""

    def __init__(self, registry: Path) -> None:
        self.instance_id = f"{os.getpid()}-1700000000999"
        write_manifest(registry, self.instance_id, project="silent", workspace="/w/silent")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(registry / f"a-{self.instance_id}.sock"))
        self.server.listen(64)
        self.held: list[socket.socket] = []
        self.released = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)
        self._thread.start()

    def _hold(self) -> None:
        while not self.released.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.held.append(conn)

    def release(self) -> None:
        self.released.set()
        self.server.close()
        for conn in self.held:
            conn.close()


def test_a_watcher_that_never_answers_delays_no_other_watchers_notice(
    make_relay: RelayFactory, registry: Path
) -> None:
    alpha, beta = make_relay("alpha"), make_relay("beta")
    assert beta.instance_id is not None and beta.socket_path is not None
    silent = SilentWatcher(registry)
    try:
        beta.set_state("busy")
        for n in range(MAX_WATCHES_PER_WATCHER):  # its whole share, first in line
            obj = {**_watch_json(alpha, beta, n), "sender_instance_id": silent.instance_id}
            obj["message_id"] = f"{silent.instance_id}-w{n}"
            assert send_json(beta.socket_path, obj)["status"] == "accepted"
        result = alpha.watch(beta.instance_id)
        beta.set_state("ready")
        # Sent one after another, alpha's notice would wait for 16 silent peers' deadlines
        # (2 s, twice each): over a minute, past WAIT; each on its own, it comes at once.
        assert alpha.wait_idle(result, WAIT) == IDLE
        assert not silent.released.is_set()
    finally:
        silent.release()
