"""Following the registry (zcoder.relay.registry_watch): a manifest's rename wakes the
watcher at once; with nothing happening it waits its timeout; discovery runs on each."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.relay.conftest import RelayFactory
from zcoder.relay import DiscoveryResult
from zcoder.relay.registry_watch import RegistryWatch, follow


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
