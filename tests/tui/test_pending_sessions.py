"""The waiting input is the open session's: saved with it at every change, held when the
session is opened again, never carried into another (/new, /clear, /sessions ID)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.tui.conftest import idle, submit, transcript_text, wait_until
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


def saved_pending(config: Any, session_id: str) -> list[tuple[str, str]]:
    with SessionStore(config.home) as store:
        return store.load(session_id, config.workspace, "coding").pending


async def test_switching_sessions_keeps_each_ones_waiting_input_with_it(
    fake, make_config, app_factory
):
    config = make_config(env={"ZCODER_RELAY": "off"})
    fake.enqueue(Turn.stall(before="busy"))
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "start")
        await wait_until(pilot, lambda: app.busy)
        await submit(pilot, app, "a steer")  # Enter while the turn runs
        app.prompt_input.load_text("a follow-up")
        await pilot.press("ctrl+g")
        first = app.session_id
        assert first is not None
        await wait_until(pilot, lambda: len(app.services.pending) == 2)
        assert saved_pending(config, first) == [("steer", "a steer"), ("follow-up", "a follow-up")]
        await pilot.press("escape")
        await idle(pilot, app)

        await submit(pilot, app, "/new")
        await wait_until(pilot, lambda: app.session_id != first)
        second = app.session_id
        assert second is not None
        assert app.services.pending.items() == () and not app.queued_prompts.display
        assert saved_pending(config, first) == [("steer", "a steer"), ("follow-up", "a follow-up")]
        assert saved_pending(config, second) == []

        await submit(pilot, app, f"/sessions {first}")
        await wait_until(pilot, lambda: app.session_id == first)
        await wait_until(pilot, lambda: "2 inputs were waiting" in transcript_text(app))
        assert [(i.text, i.held) for i in app.services.pending.items()] == [
            ("a steer", True),
            ("a follow-up", True),
        ]
        assert "held · /queue resume" in app.queued_prompts.plain
        assert len(fake.chat_bodies) == 1  # nothing ran unasked
        await submit(pilot, app, "/queue drop 2")
        await wait_until(pilot, lambda: saved_pending(config, first) == [("steer", "a steer")])
        assert saved_pending(config, second) == []
