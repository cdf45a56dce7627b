"""The MCP tests' fixtures: the fake Ollama and a client of it, private directories, and the
agents made in a test, whose MCP servers are closed after it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama
from zcoder.agent import Agent
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
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    return home, ws.resolve()


@pytest.fixture
def agents() -> Iterator[list[Agent]]:
    made: list[Agent] = []
    yield made
    for agent in made:
        if agent.mcp is not None:
            agent.mcp.close()
