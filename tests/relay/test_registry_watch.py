"""Following the registry (zcoder.relay.registry_watch): a manifest's rename wakes the
watcher at once; with nothing happening it waits its timeout; discovery runs on each."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

from tests.relay.conftest import RelayFactory
from zcoder.relay import DiscoveryResult
from zcoder.relay.registry_watch import MIN_REFRESH_SECONDS, RegistryWatch, follow


def test_a_rename_in_the_directory_wakes_the_watch(tmp_path: Path) -> None:
    with RegistryWatch(tmp_path) as watch:
        assert watch.notified
        assert watch.wait(0.05) is False  # nothing happened: the time ran out
        (tmp_path / ".tmp-a-1").write_text("{}")
        (tmp_path / ".tmp-a-1").rename(tmp_path / "a-1.json")
        assert watch.wait(30) is True
        assert watch.wait(0.05) is False  # the events were taken together


def test_follow_shows_each_change_until_stopped(make_relay: RelayFactory, registry: Path) -> None:
    seen: list[DiscoveryResult] = []
    changed = threading.Condition()

    def show(result: DiscoveryResult) -> None:
        with changed:
            seen.append(result)
            changed.notify_all()

    def activities() -> list[str]:
        return [peer.activity for result in seen for peer in result.peers]

    agent = make_relay("agent")
    stopped = threading.Event()
    thread = threading.Thread(
        target=follow,
        kwargs={"registry": registry, "io_timeout": 5.0, "show": show, "stopped": stopped},
    )
    thread.start()
    try:
        with changed:
            assert changed.wait_for(lambda: bool(seen) and seen[-1].peers, timeout=30)
        agent.set_activity("waiting for approval")
        with changed:
            assert changed.wait_for(lambda: "waiting for approval" in activities(), timeout=30)
    finally:
        stopped.set()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_a_flood_of_renames_does_not_become_a_flood_of_discoveries(
    make_relay: RelayFactory, registry: Path
) -> None:
    make_relay("agent")
    shown: list[float] = []
    stopped = threading.Event()
    flooding = threading.Event()

    def flood() -> None:
        n = 0
        while not stopped.is_set():
            (registry / f".tmp-x{n % 2}").write_text("x")
            (registry / f".tmp-x{n % 2}").rename(registry / f"junk-{n % 2}")
            n += 1
            flooding.set()

    def show(_result: DiscoveryResult) -> None:
        shown.append(time.monotonic())
        if len(shown) >= 12:
            stopped.set()

    flooder = threading.Thread(target=flood)
    flooder.start()
    flooding.wait(30)
    try:
        follow(registry, io_timeout=5.0, show=show, stopped=stopped)
    finally:
        stopped.set()
        flooder.join(30)
    # A lower bound (a wait lasts at least its time), which load only makes larger.
    gaps = [later - earlier for earlier, later in itertools.pairwise(shown[1:])]
    assert min(gaps) >= MIN_REFRESH_SECONDS * 0.9
