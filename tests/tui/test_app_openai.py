"""The interactive app on the ``openai`` backend, under run_test, against the fake
OpenAI-compatible server: a turn, the warm-up, the model picker, the header, and the API
key appearing nowhere (screen, session database, log file)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.fake_openai import FakeOpenAI
from tests.tui.conftest import ConfigFactory, entries, idle, submit, transcript_text, wait_until
from zcoder.base.logfile import LOG_FILE_NAME, setup_logging
from zcoder.model import OpenAIClient
from zcoder.tui.dialogs.model_picker import ModelPicker

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)
KEY = "sk-tui-secret-5be0d1"
MODEL = "qwen3-coder"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as fake:
        yield fake


@pytest.fixture
def openai_config(make_config: ConfigFactory, server: FakeOpenAI) -> ConfigFactory:
    def factory(**overrides: Any) -> Any:
        extra = {
            "ZCODER_BACKEND": "openai",
            "ZCODER_BASE_URL": server.base_url,
            "ZCODER_API_KEY": KEY,
            "ZCODER_MODEL": MODEL,
            **overrides.pop("env", {}),
        }
        return make_config(env=extra, **overrides)

    return factory


@pytest.fixture
def logged(openai_config: ConfigFactory) -> Iterator[Path]:
    """The app's log file, as `zcoder` sets it up, with every zcoder record in it."""
    logger = logging.getLogger("zcoder")
    handlers, level = list(logger.handlers), logger.level
    path = setup_logging(openai_config().home)
    assert path is not None
    logger.setLevel(logging.DEBUG)
    yield path
    for handler in logger.handlers[:]:
        if handler not in handlers:
            logger.removeHandler(handler)
            handler.close()
    logger.setLevel(level)


async def test_a_turn_with_a_tool_round_on_the_openai_backend(
    server: FakeOpenAI, fake: FakeOllama, openai_config: ConfigFactory, app_factory: Any
) -> None:
    server.enqueue(
        Turn.tool_calls(call("read_file", {"path": "hello.py"}, id="call_h1")),
        Turn.text("hello.py prints hello."),
    )
    app = app_factory(openai_config())
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.client, OpenAIClient)
        await wait_until(pilot, lambda: len(server.load_requests) == 1)  # the warm-up
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "what does hello.py do?")
        await idle(pilot, app)
        [reply] = entries(app, "assistant")
        assert "hello.py prints hello." in reply.plain
        assert app.header_state.host == f"127.0.0.1:{server.port}/v1"
        assert f"{MODEL}@127.0.0.1:{server.port}/v1" in str(app.header.render())
    first, second = server.chat_bodies
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert second["messages"][-1]["tool_call_id"] == "call_h1"
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_h1"
    assert server.load_requests[0]["model"] == MODEL
    assert fake.requests == []  # nothing went to Ollama


async def test_the_model_picker_lists_v1_models_and_switches(
    server: FakeOpenAI, openai_config: ConfigFactory, app_factory: Any
) -> None:
    app = app_factory(openai_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(server.load_requests) == 1)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker))
        assert app.screen.models == ["qwen3-coder", "devstral-small"]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.model == "devstral-small"
        assert app.header_state.model == "devstral-small"
        await wait_until(pilot, lambda: len(server.load_requests) == 2)  # warmed up again
        assert server.load_requests[-1]["model"] == "devstral-small"
    assert any(r.path == "/v1/models" for r in server.requests)


async def test_the_api_key_appears_nowhere(
    server: FakeOpenAI, openai_config: ConfigFactory, app_factory: Any, logged: Path
) -> None:
    server.enqueue(Turn.text("An answer."))
    config = openai_config()
    assert KEY not in repr(config)
    app = app_factory(config)
    screens: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "hi")
        await idle(pilot, app)
        screens.append(app.export_screenshot())
        screens.append(transcript_text(app))
    # The same server with a wrong key: the error is on screen, and names the fix.
    wrong = app_factory(openai_config(env={"ZCODER_API_KEY": "sk-wrong-key-77"}))
    async with wrong.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: wrong.header_state.status == "Error")
        await submit(pilot, wrong, "hi again")
        await idle(pilot, wrong)
        shown = transcript_text(wrong)
        assert "refused the API key (HTTP 401); check ZCODER_API_KEY" in shown
        screens.append(wrong.export_screenshot())
        screens.append(shown)
    assert server.requests and all(
        r.headers["Authorization"] in (f"Bearer {KEY}", "Bearer sk-wrong-key-77")
        for r in server.requests
    )
    for text in screens:
        assert KEY not in text and "sk-wrong-key-77" not in text
    stored = b"".join(p.read_bytes() for p in sorted(config.home.rglob("*")) if p.is_file())
    assert (config.home / "sessions.db").exists() and logged.name == LOG_FILE_NAME
    assert KEY.encode() not in stored and b"sk-wrong-key-77" not in stored
