"""Fixtures for relay tests: short private directories, an env, a started Relay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.relay_peer import RelayPeerProcess
from tests.fixtures.workspace import short_tmp
from zcoder.relay import Relay, load_relay_settings
from zcoder.relay.protocol import Envelope
from zcoder.relay.trust import TRUST


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A private directory with a short path: sun_path is only ~100 bytes (the test's
    environment is relay_env, not this process's)."""
    with short_tmp("zr") as path:
        yield path


@pytest.fixture
def registry(short_dir: Path) -> Path:
    return short_dir / "reg"


@pytest.fixture
def relay_env(short_dir: Path, registry: Path) -> dict[str, str]:
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("ZCODER_"):
            del env[key]
    runtime = short_dir / "run"
    runtime.mkdir(mode=0o700)
    env.update(
        ZCODER_RELAY_DIR=str(registry),
        XDG_RUNTIME_DIR=str(runtime),
        TMPDIR=str(short_dir),
        ZCODER_HOME=str(short_dir / "home"),
    )
    return env


RelayFactory = Callable[..., Relay]


@pytest.fixture
def make_relay(relay_env: dict[str, str], short_dir: Path) -> Iterator[RelayFactory]:
    """Start in-process relays; every one is stopped at the end of the test."""
    started: list[Relay] = []

    def factory(name: str = "alpha", env: dict[str, str] | None = None, **kwargs: Any) -> Relay:
        environment = dict(relay_env if env is None else env)
        workspace = short_dir / name
        workspace.mkdir(exist_ok=True)
        relay = Relay(
            load_relay_settings(environment), workspace=workspace, env=environment, **kwargs
        )
        started.append(relay)
        relay.start()
        return relay

    yield factory
    for relay in started:
        relay.stop()


PeerFactory = Callable[..., RelayPeerProcess]


@pytest.fixture
def make_peer(relay_env: dict[str, str], short_dir: Path) -> Iterator[PeerFactory]:
    """Start relay-only peers as separate processes; all are closed at the end."""
    peers: list[RelayPeerProcess] = []

    def factory(
        name: str = "peer", env: dict[str, str] | None = None, **kwargs: Any
    ) -> RelayPeerProcess:
        peer = RelayPeerProcess(short_dir / name, dict(relay_env if env is None else env), **kwargs)
        peers.append(peer)
        return peer

    yield factory
    for peer in peers:
        peer.close()


def trusting_pair(
    make_relay: RelayFactory,
    relay_env: dict[str, str],
    home: Path,
    *,
    interactive: bool = False,
) -> tuple[Relay, Relay]:
    """(alpha, beta): alpha holds messages by default (``ZCODER_RELAY_INBOUND=hold``) and
    trusts beta, a live interactive instance: the stage of every attempt to borrow beta's
    standing."""
    alpha = make_relay(
        "alpha",
        env={**relay_env, "ZCODER_RELAY_INBOUND": "hold"},
        home=home,
        interactive=interactive,
    )
    beta = make_relay("beta", interactive=True)
    alpha.trust.set(str(beta.workspace), TRUST)
    return alpha, beta


def zcoder(
    env: dict[str, str],
    *args: str,
    cwd: Path | None = None,
    stdin: str = "",
    new_session: bool = False,
) -> subprocess.CompletedProcess[str]:
    """A ``zcoder`` command (agents, send) run as a script or a user runs it, ``stdin`` its
    input; in its own session with ``new_session``."""
    return subprocess.run(
        [sys.executable, "-m", "zcoder", *args],
        input=stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
        start_new_session=new_session,
    )


def write_manifest(registry: Path, file_id: str, /, **over: object) -> Path:
    """A registry manifest a-<file_id>.json (private, compact JSON, as zcoder.zsh writes one)
    for an instance no Relay runs: a ready instance ``file_id``, its pid the id's first part;
    members in ``over`` (even ``instance_id``) replace or join those."""
    manifest: dict[str, object] = {
        "protocol": 1,
        "instance_id": file_id,
        "pid": int(file_id.split("-", maxsplit=1)[0]),
        "project": "ghost",
        "workspace": "/nowhere/ghost",
        "session_id": "",
        "profile": "coding",
        "model": "m",
        "socket": str(registry / f"a-{file_id}.sock"),
        "state": "ready",
        "started_at": 1,
    }
    manifest.update(over)
    path = registry / f"a-{file_id}.json"
    path.write_text(json.dumps(manifest, separators=(",", ":")))
    path.chmod(0o600)
    return path


def spool_envelope(n: int, *, target: str, sender: str, body: str = "task {n}") -> Envelope:
    """Message ``n`` from ``sender`` (an instance id, its pid first) to ``target``, for
    tests that store messages in a Spool directly; ``{n}`` in ``body`` becomes ``n``."""
    return Envelope(
        message_id=f"{sender}-{n}",
        target_instance_id=target,
        sender_instance_id=sender,
        sender_pid=int(sender.split("-", maxsplit=1)[0]),
        sender_project="p",
        sender_workspace="/p",
        body=body.format(n=n),
        created_at=1,
    )
