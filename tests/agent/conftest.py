from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.support import Harness, make_harness
from tests.fixtures.fake_ollama import FakeOllama
from zcoder.model import OllamaClient
from zcoder.sessions import SessionStore

# The model servers' fakes and clients (``fake``, ``client``...) are tests/conftest.py's.


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
def harness(
    fake: FakeOllama, store: SessionStore, workspace: Path, client: OllamaClient
) -> Harness:
    return make_harness(fake, store, workspace, client)
