"""The MCP tests' fixtures: the fake Ollama and a client of it, and the world of a test of
real turns (tests/mcp_client/turns.py), whose agents' MCP servers are closed after it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama
from tests.mcp_client.turns import World
from zcoder.model import OllamaClient

# The fake Ollama and its client, ``fake`` and ``client``, are tests/conftest.py's.


@pytest.fixture
def world(fake: FakeOllama, client: OllamaClient, tmp_path: Path) -> Iterator[World]:
    ws = tmp_path / "ws"
    ws.mkdir()
    made = World(fake, client, tmp_path / "home", ws.resolve())
    yield made
    for agent in made.made:
        if agent.mcp is not None:
            agent.mcp.close()
