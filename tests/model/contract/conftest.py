"""The backends the ModelClient contract (zcoder.model.protocol) is checked against: the
fake Ollama, the fake OpenAI-compatible server, and the real embedded llama.cpp server.

``backend`` is each of the three; ``scripted`` only the two fakes, for what a real small
model cannot be made to do on demand (exact tool calls, errors, stalls). A test of the
suite is written once and runs against each (issue 28, item 8).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.fake_openai import FakeOpenAI
from tests.fixtures.model_clients import MODEL, READ_TIMEOUT
from tests.fixtures.real_server import ALIAS, RealServers
from zcoder.model import OllamaClient, OpenAIClient
from zcoder.model.protocol import ModelClient

Client = OllamaClient | OpenAIClient
"""The backends' clients: each satisfies zcoder.model.protocol.ModelClient (checked below)."""
Fake = FakeOllama | FakeOpenAI

REAL_READ_TIMEOUT = 120.0
"""A real model on two shared cores may think a while before its first token."""


@dataclass
class Backend:
    """A client of one backend, the model it chats with, and the fake behind it (None for
    the real server, which cannot be scripted)."""

    name: str
    client: Client
    model: str
    fake: Fake | None

    def script(self, *turns: Turn) -> None:
        """The fake's next replies; the real model answers as it will."""
        if self.fake is not None:
            self.fake.enqueue(*turns)


def _client(name: str, request: pytest.FixtureRequest) -> tuple[Client, str, Fake | None]:
    if name == "ollama":
        fake: FakeOllama = request.getfixturevalue("fake")
        return OllamaClient(fake.url, read_timeout=READ_TIMEOUT), MODEL, fake
    if name == "openai":
        openai_fake: FakeOpenAI = request.getfixturevalue("openai_fake")
        client = OpenAIClient(
            openai_fake.base_url, api_key=openai_fake.api_key, read_timeout=READ_TIMEOUT
        )
        return client, MODEL, openai_fake
    real_servers: RealServers = request.getfixturevalue("real_servers")
    server = real_servers("tools")
    return OpenAIClient(server.base_url, read_timeout=REAL_READ_TIMEOUT), ALIAS, None


async def _opened(name: str, request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    client, model, fake = _client(name, request)
    async with client:
        yield Backend(name, _model_client(client), model, fake)


def _model_client(client: Client) -> Client:
    """``client``, which mypy checks is a ModelClient: the suite holds it as the app does."""
    checked: ModelClient = client
    assert checked is client
    return client


@pytest.fixture(params=["ollama", "openai", pytest.param("real", marks=pytest.mark.real)])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    async for opened in _opened(request.param, request):
        yield opened


@pytest.fixture(params=["ollama", "openai"])
async def scripted(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    async for opened in _opened(request.param, request):
        yield opened
