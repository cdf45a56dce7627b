"""A llama-server whose chat template cannot take tools accepts them silently and the
model never sees a schema: zcoder reads /props and warns once, with the fix, through the
agent's events (the TUI's transcript and --prompt's stderr both show them) (issue 18
item 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.support import make_agent
from tests.fixtures.fake_ollama import Turn
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.agent import Notice, Outcome
from zcoder.model import OpenAIClient
from zcoder.sessions import SessionStore


def template_notices(notices: list[Notice]) -> list[str]:
    return [n.text for n in notices if "chat template" in n.text]


@pytest.mark.parametrize("supports_tools", [False, True, None])
async def test_a_template_without_tools_is_warned_about_once_with_the_fix(
    store: SessionStore, workspace: Path, supports_tools: bool | None
) -> None:
    with FakeOpenAI(supports_tools=supports_tools) as server:
        async with OpenAIClient(server.base_url, read_timeout=10) as client:
            agent, log, session_id = make_agent(client, store, workspace)
            server.enqueue(Turn.text("I see no tools."), Turn.text("Still none."))
            assert (await agent.run_user_turn("read alpha.txt")).outcome is Outcome.COMPLETE
            assert (await agent.run_user_turn("and beta.py")).outcome is Outcome.COMPLETE
        asked = [r for r in server.requests if r.path == "/props"]
    warnings = template_notices(log.of(Notice))
    if supports_tools is False:
        (warning,) = warnings
        assert "cannot take tools" in warning
        assert "--jinja --chat-template-file" in warning
        assert "chat_template_caps.supports_tools is false" in warning
        events = store.load(session_id, workspace, "coding").events
        assert [e.text for e in events if e.role == "system"] == [warning]
    else:
        assert warnings == []
    assert len(asked) == 1  # asked once, not before every request
