"""The MCP tests' fixtures: the fake Ollama and a client of it, and the world of a test of
real turns (tests/mcp_client/turns.py), whose agents' MCP servers are closed after it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama
from tests.mcp_client.turns import World
from zcoder.model import OllamaClient


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


@pytest.fixture
async def client(fake: FakeOllama) -> AsyncIterator[OllamaClient]:
    async with OllamaClient(fake.url, read_timeout=30) as ollama:
        yield ollama


@pytest.fixture
def world(fake: FakeOllama, client: OllamaClient, tmp_path: Path) -> Iterator[World]:
    ws = tmp_path / "ws"
    ws.mkdir()
    made = World(fake, client, tmp_path / "home", ws.resolve())
    yield made
    for agent in made.made:
        if agent.mcp is not None:
            agent.mcp.close()
