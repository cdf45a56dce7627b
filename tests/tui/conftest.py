"""The real Textual app under run_test, against the fake Ollama, in private directories."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.workspace import short_dir
from zcoder.config import Config, load_config
from zcoder.relay import Relay, load_relay_settings
from zcoder.tui import ZcoderApp
from zcoder.tui.widgets.transcript import Entry

__all__ = ["short_dir"]  # the fixture, for the tests here (tests.fixtures.workspace)


@pytest.fixture
def env(short_dir: Path, fake: FakeOllama) -> dict[str, str]:
    return {
        "ZCODER_HOME": str(short_dir / "home"),
        "ZCODER_RELAY_DIR": str(short_dir / "reg"),
        "OLLAMA_HOST": fake.url,
        "ZCODER_MODEL": "fixture-model",
        "HOME": str(short_dir),
    }


@pytest.fixture
def workspace(short_dir: Path) -> Path:
    ws = short_dir / "project"
    ws.mkdir()
    (ws / "hello.py").write_text("print('hello')\n")
    return ws


ConfigFactory = Callable[..., Config]


@pytest.fixture
def make_config(env: dict[str, str], workspace: Path) -> ConfigFactory:
    def factory(**overrides: Any) -> Config:
        extra_env = overrides.pop("env", {})
        return load_config({**env, **extra_env}, workspace=str(workspace), **overrides)

    return factory


@pytest.fixture
def sender(env: dict[str, str], short_dir: Path) -> Iterator[Relay]:
    """A registered relay in the test process, to deliver messages to the app."""
    ws = short_dir / "sender-project"
    ws.mkdir()
    # An interactive instance, as far as the app can tell (zcoder.relay.standing).
    relay = Relay(
        load_relay_settings(env), workspace=ws, env={**os.environ, **env}, interactive=True
    )
    relay.start()
    assert relay.available, relay.status().reason
    yield relay
    relay.stop()


async def wait_until(pilot: Any, predicate: Callable[[], object], timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)


def entries(app: ZcoderApp, role: str | None = None) -> list[Entry]:
    found = list(app.query(Entry))
    return [e for e in found if role is None or e.role == role]


def transcript_text(app: ZcoderApp) -> str:
    return "\n---\n".join(e.plain for e in entries(app))


async def submit(pilot: Any, app: ZcoderApp, text: str) -> None:
    app.prompt_input.load_text(text)
    await pilot.press("enter")
    await pilot.pause()


async def idle(pilot: Any, app: ZcoderApp, timeout: float = 10.0) -> None:
    await wait_until(pilot, lambda: not app.busy, timeout)
    await pilot.pause()


async def converse(pilot: Any, app: ZcoderApp, fake: FakeOllama, *words: str) -> None:
    """One long answered request a word: a history with turns old enough to compact."""
    for word in words:
        fake.enqueue(Turn.text(f"answer {word} " + "detail " * 150))
        await submit(pilot, app, f"request {word}")
        await idle(pilot, app)


@pytest.fixture
async def app_factory() -> AsyncIterator[Callable[..., ZcoderApp]]:
    made: list[ZcoderApp] = []

    def factory(config: Config, **kwargs: Any) -> ZcoderApp:
        app = ZcoderApp(config, **kwargs)
        made.append(app)
        return app

    yield factory
    for app in made:
        app._stop_services()


async def answer(pilot: Any, app: ZcoderApp, key: str) -> None:
    """Press ``key`` in the open dialog once it is armed (it ignores keys before that)
    and, for a yes, once all of its content was drawn (it refuses a yes before that)."""
    from zcoder.tui.dialogs.guarded import GuardedDialog

    await wait_until(pilot, lambda: isinstance(app.screen, GuardedDialog) and app.screen.armed)
    if key in ("y", "a"):
        await wait_until(
            pilot, lambda: isinstance(app.screen, GuardedDialog) and app.screen.seen_all
        )
    await pilot.press(key)
    await pilot.pause()
