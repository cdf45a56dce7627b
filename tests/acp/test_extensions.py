"""``_zcoder/info`` and ``_zcoder/peers``: what ``zcoder --connect`` asks its remote agent,
asked here by the SDK's client side of a real ``zcoder --acp``."""

from __future__ import annotations

import asyncio
import shutil
import socket

import pytest
from acp import RequestError

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder
from tests.e2e.harness import private_root
from tests.fixtures.fake_ollama import FakeOllama
from tests.test_oneshot import Env
from zcoder.relay import Relay, load_relay_settings


async def test_info_says_where_the_agent_runs(env: Env, fake: FakeOllama) -> None:
    async with acp_zcoder(env, fake, RecordingClient()) as (conn, _process):
        await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
        info = await asyncio.wait_for(conn.ext_method("zcoder/info", {}), WAIT_SECONDS)
    assert info["cwd"] == str(env.workspace)
    assert info["hostname"] == socket.gethostname()
    assert (info["profile"], info["model"]) == ("coding", "qwen3-coder")


async def test_peers_are_this_hosts_and_discovery_publishes_nothing(
    env: Env, fake: FakeOllama
) -> None:
    registry = private_root()  # a socket's path must be short
    env.vars["ZCODER_RELAY_DIR"] = str(registry)
    peer_dir = env.workspace.parent / "peer"
    peer_dir.mkdir()
    peer = Relay(
        load_relay_settings(env.vars),
        workspace=peer_dir,
        env=env.vars,
        name="the-peer",
        interactive=True,
    )
    assert peer.start().available
    try:
        async with acp_zcoder(env, fake, RecordingClient()) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
            found = await asyncio.wait_for(conn.ext_method("zcoder/peers", {}), WAIT_SECONDS)
            with pytest.raises(RequestError) as unknown:
                await asyncio.wait_for(conn.ext_method("zcoder/nope", {}), WAIT_SECONDS)
    finally:
        peer.stop()
        left = list(registry.iterdir())  # the peer is gone; nothing else was there
        shutil.rmtree(registry, ignore_errors=True)
    assert found["error"] is None and found["count"] == 1
    assert "the-peer" in found["table"] and str(peer_dir) in found["table"]
    assert unknown.value.code == -32601  # method not found
    assert left == []
