"""`zcoder agents --wait-idle NAME`: a real command against real peers, one exit code per
outcome."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.fixtures.relay_peer import RelayPeerProcess
from tests.relay.conftest import PeerFactory, zcoder
from tests.relay.test_receipts import ZshShapedPeer
from tests.relay.test_watches import zsh_peer
from zcoder.relay.registry import ManifestError, list_manifest_names, read_manifest_file
from zcoder.relay.scripts import (
    EXIT_ACCEPTED,
    EXIT_CANNOT_NOTIFY,
    EXIT_DISCARDED,
    EXIT_NO_SUCH_PEER,
    EXIT_TIMED_OUT,
    EXIT_USAGE,
)

WAIT = 30.0

__all__ = ["zsh_peer"]  # a fixture


def _waiting(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "zcoder", "agents", "--wait-idle", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _until_waiting_on(registry: Path, target: str) -> str:
    """Until some instance publishes that it waits on ``target`` (its watch is in place);
    that instance's id."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for name in list_manifest_names(registry):
            try:
                manifest = read_manifest_file(registry, name)
            except ManifestError:
                continue
            if manifest.waiting_on == target:
                return manifest.instance_id
    raise AssertionError("the waiter never published waiting_on")


def test_an_idle_peer_answers_at_once(make_peer: PeerFactory, relay_env: dict[str, str]) -> None:
    make_peer("beta")
    done = zcoder(relay_env, "agents", "--wait-idle", "beta")
    assert done.returncode == EXIT_ACCEPTED, done.stderr
    assert done.stdout == "beta is idle\n"


def test_a_busy_peer_times_out(make_peer: PeerFactory, relay_env: dict[str, str]) -> None:
    beta = make_peer("beta")
    beta.ask("busy", "info")
    done = zcoder(relay_env, "agents", "--wait-idle", "beta", "--timeout", "0.5")
    assert done.returncode == EXIT_TIMED_OUT, done.stderr
    assert "was not idle within 0.5 s" in done.stderr


def test_no_such_peer_and_usage(relay_env: dict[str, str]) -> None:
    done = zcoder(relay_env, "agents", "--wait-idle", "nobody")
    assert done.returncode == EXIT_NO_SUCH_PEER
    for args in (["--wait-idle", "x", "--timeout", "-1"], ["--timeout", "5"]):
        assert zcoder(relay_env, "agents", *args).returncode == EXIT_USAGE


def _busy_and_waited_on(
    make_peer: PeerFactory, env: dict[str, str], registry: Path
) -> tuple[RelayPeerProcess, subprocess.Popen[str], str]:
    """beta, busy, and a `zcoder agents --wait-idle beta` whose watch is in place, with its
    instance id."""
    beta = make_peer("beta")
    beta.ask("busy", "info")
    waiter = _waiting(env, "beta")
    return beta, waiter, _until_waiting_on(registry, beta.instance_id)


def test_a_busy_peer_going_idle_ends_the_wait(
    make_peer: PeerFactory, relay_env: dict[str, str], registry: Path
) -> None:
    beta, waiter, waiter_id = _busy_and_waited_on(make_peer, relay_env, registry)
    # While it waits it is listed, but takes no task: nothing there would run it.
    assert beta.send(waiter_id, "a task for nobody")["status"] == "paused"
    beta.ask("ready", "info")
    out, err = waiter.communicate(timeout=WAIT)
    assert waiter.returncode == EXIT_ACCEPTED, err
    assert out == "beta is idle\n"


def test_a_peer_that_exits_ends_the_wait_as_gone(
    make_peer: PeerFactory, relay_env: dict[str, str], registry: Path
) -> None:
    beta, waiter, _ = _busy_and_waited_on(make_peer, relay_env, registry)
    beta.kill()
    _out, err = waiter.communicate(timeout=WAIT)
    assert waiter.returncode == EXIT_DISCARDED, err
    assert "went away before it was idle" in err


def test_zcoder_zsh_cannot_notify(
    relay_env: dict[str, str], zsh_peer: tuple[str, ZshShapedPeer]
) -> None:
    zsh_id, peer = zsh_peer
    done = zcoder(relay_env, "agents", "--wait-idle", zsh_id)
    assert done.returncode == EXIT_CANNOT_NOTIFY, done.stderr
    assert "cannot notify when idle" in done.stderr
    assert [r["type"] for r in peer.requests if r["type"] != "ping"] == ["watch"]
