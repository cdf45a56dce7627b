from collections.abc import AsyncIterator, Iterator

import pytest

from tests.fixtures.fake_ollama import FakeOllama
from zcoder.model import OllamaClient


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


@pytest.fixture
async def client(fake: FakeOllama) -> AsyncIterator[OllamaClient]:
    async with OllamaClient(fake.url) as ollama:
        yield ollama
