"""The interactive app sizes the context window and loads the model as its first turn will.

The real app under run_test, against the fake Ollama: every request carries num_ctx (the
warm-up too), the warm-up starts like the first turn, nothing reloads in between, /model
sizes again, and an allocation other than the one asked for is reported once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.worker import WorkerState

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.tui.conftest import entries, idle, submit, wait_until
from zcoder.model.context import CONTEXT_WINDOW_CAP
from zcoder.model.http import WARM_UP_NUM_PREDICT

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)
MODEL = "fixture-model"
LOADED = "fixture-model:latest"


def notices(app, text: str) -> list[str]:
    return [e.plain for e in entries(app, "system") if text in e.plain]


def allocation_checks_done(app) -> bool:
    return not [
        w
        for w in app.workers
        if w.group == "allocation" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
    ]


def write_settings(home: Path, settings: object) -> None:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps(settings) if settings is not None else "{")


async def test_every_request_carries_the_window_and_the_model_loads_once(
    fake: FakeOllama, make_config, app_factory
) -> None:
    fake.context_lengths[MODEL] = 262144
    fake.enqueue(Turn.tool_calls(call("list_files", {"path": "."})), Turn.text("Two files."))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "list the files")
        await idle(pilot, app)
        assert app.context_window is not None
        assert app.context_window.source == "the model's trained length 262144, capped at 32768"
    bodies = fake.all_chat_bodies
    assert len(bodies) == 3  # the warm-up, then the two rounds of the turn
    assert [body["options"]["num_ctx"] for body in bodies] == [CONTEXT_WINDOW_CAP] * 3
    assert fake.loads == {LOADED: 1}  # never reloaded between the warm-up and the turn
    assert fake.loaded() == {LOADED: CONTEXT_WINDOW_CAP}


async def test_a_prompt_typed_before_the_window_is_known_still_carries_it(
    fake: FakeOllama, make_config, app_factory
) -> None:
    fake.enqueue(Turn.text("hello"))
    app = app_factory(make_config(env={"ZCODER_CONTEXT_WINDOW": "12288"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "hi")  # at once: the warm-up may still be running
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 1)
        await idle(pilot, app)
    assert {body["options"]["num_ctx"] for body in fake.all_chat_bodies} == {12288}


async def test_the_warm_up_starts_exactly_like_the_first_turn(
    fake: FakeOllama, make_config, app_factory
) -> None:
    fake.enqueue(Turn.text("hello"))
    config = make_config(env={"ZCODER_KEEP_ALIVE": "30m", "ZCODER_THINK": "off"})
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "hi")
        await idle(pilot, app)
        assert app.agent is not None
        # The warm-up never entered history: only the user's prompt and the reply.
        assert [m["role"] for m in app.agent.messages] == ["user", "assistant"]
    [load] = fake.load_requests
    [first] = fake.chat_bodies
    assert [m["role"] for m in load["messages"]] == ["system"]
    assert load["messages"] == first["messages"][:1]  # the same system prompt
    assert load["tools"] == first["tools"] and len(load["tools"]) >= 9  # the same schemas
    assert load["options"]["num_ctx"] == first["options"]["num_ctx"] == CONTEXT_WINDOW_CAP
    assert load["think"] is first["think"] is False
    assert load["keep_alive"] == first["keep_alive"] == "30m"
    assert load["options"]["num_predict"] == WARM_UP_NUM_PREDICT
    assert fake.loads == {LOADED: 1}


async def test_an_allocation_other_than_asked_is_reported_once(
    fake: FakeOllama, make_config, app_factory
) -> None:
    fake.allocations[MODEL] = 4096  # a server limit: Ollama gives 4096 whatever is asked
    fake.enqueue(Turn.text("one"), Turn.text("two"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        text = f"Ollama loaded {MODEL} with a 4096-token context window, not the 32768"
        await wait_until(pilot, lambda: notices(app, text))
        await submit(pilot, app, "first")
        await idle(pilot, app)
        await submit(pilot, app, "second")
        await idle(pilot, app)
        [notice] = notices(app, text)
        assert "--context-window 4096" in notice


async def test_no_notice_when_ollama_allocated_what_was_asked(
    fake: FakeOllama, make_config, app_factory
) -> None:
    fake.enqueue(Turn.text("one"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "first")
        await idle(pilot, app)
        # /api/ps twice: to size the window, then to check the allocation (done once).
        await wait_until(pilot, lambda: len([r for r in fake.requests if r.path == "/api/ps"]) > 1)
        await wait_until(pilot, lambda: allocation_checks_done(app))
        assert notices(app, "context window") == []
        assert len([r for r in fake.requests if r.path == "/api/ps"]) == 2


async def test_the_model_picker_sizes_the_window_again_per_model(
    fake: FakeOllama, make_config, app_factory
) -> None:
    config = make_config()
    write_settings(
        config.home,
        {"context_window": 12288, "models": {"llama3.2": {"context_window": 20480}}},
    )
    fake.enqueue(Turn.text("hello"))
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(fake.load_requests) == 1)
        assert fake.load_requests[0]["options"]["num_ctx"] == 12288
        await submit(pilot, app, "/model llama3.2:latest")
        await wait_until(pilot, lambda: len(fake.load_requests) == 2)
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "hi")
        await idle(pilot, app)
        assert app.context_window is not None
        assert app.context_window.source == "settings.json, models.llama3.2.context_window"
    second = fake.load_requests[1]
    assert (second["model"], second["options"]["num_ctx"]) == ("llama3.2:latest", 20480)
    [turn] = fake.chat_bodies
    assert (turn["model"], turn["options"]["num_ctx"]) == ("llama3.2:latest", 20480)


async def test_a_broken_settings_file_is_a_warning_not_a_crash(
    fake: FakeOllama, make_config, app_factory
) -> None:
    config = make_config()
    write_settings(config.home, None)  # "{": not valid JSON
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: notices(app, "settings.json is ignored"))
        await wait_until(pilot, lambda: len(fake.load_requests) == 1)
        [warning] = notices(app, "settings.json is ignored")
        assert "not valid JSON" in warning
    assert fake.load_requests[0]["options"]["num_ctx"] == CONTEXT_WINDOW_CAP  # from Ollama
