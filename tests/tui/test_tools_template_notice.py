"""The interactive app warns once, in the transcript, when llama-server's chat template
cannot take tools (issue 18 item 17): the agent's Notice reaches the TUI through the
same event path as every notice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.fixtures.fake_openai import FakeOpenAI
from tests.tui.conftest import ConfigFactory, entries, idle, submit, wait_until

pytestmark = pytest.mark.timeout(60)


async def test_a_template_without_tools_shows_one_notice_with_the_fix(
    make_config: ConfigFactory, app_factory: Any
) -> None:
    with FakeOpenAI(supports_tools=False) as server:
        server.enqueue(Turn.text("I see no tools."), Turn.text("Still none."))
        config = make_config(
            env={
                "ZCODER_BACKEND": "openai",
                "ZCODER_BASE_URL": server.base_url,
                "ZCODER_MODEL": "qwen3-coder",
            }
        )
        app = app_factory(config)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.header_state.status == "Ready")
            await submit(pilot, app, "read hello.py")
            await idle(pilot, app)
            await submit(pilot, app, "and again")
            await idle(pilot, app)
            notices = [e.plain for e in entries(app, "system") if "chat template" in e.plain]
    assert len(notices) == 1
    assert "--jinja --chat-template-file" in notices[0]
