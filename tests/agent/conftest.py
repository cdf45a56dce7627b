from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.agent.support import Harness, make_harness
from tests.fixtures.fake_ollama import FakeOllama
from zcoder.model import OllamaClient
from zcoder.sessions import SessionStore


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "alpha.txt").write_text("alpha\n")
    (ws / "beta.py").write_text("print('beta')\n")
    return ws.resolve()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore(tmp_path / "home") as opened:
        yield opened


@pytest.fixture
async def client(fake: FakeOllama) -> AsyncIterator[OllamaClient]:
    async with OllamaClient(fake.url, read_timeout=10) as ollama:
        yield ollama


@pytest.fixture
def harness(
    fake: FakeOllama, store: SessionStore, workspace: Path, client: OllamaClient
) -> Harness:
    return make_harness(fake, store, workspace, client)
