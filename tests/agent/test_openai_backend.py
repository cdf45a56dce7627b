"""The real Agent on the ``openai`` backend: a full tool round through the fake
OpenAI-compatible server, the session it saves, and errors as the user sees them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.support import make_agent
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.agent import ErrorNotice, Outcome, ToolFinished
from zcoder.model import OpenAIClient
from zcoder.sessions import SessionStore

MODEL = "qwen3-coder"
KEY = "sk-agent-test-93c1"


@pytest.fixture
def openai_options() -> dict[str, Any]:
    return {"api_key": KEY}


async def test_a_full_tool_round_sends_the_calls_and_results_back_with_the_same_ids(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, store: SessionStore, workspace: Path
) -> None:
    openai_fake.enqueue(
        Turn.tool_calls(
            call("list_files", {"path": "."}, id="call_list_1"),
            call("read_file", {"path": "alpha.txt"}, id="call_read_2"),
            prompt_eval_count=1800,
        ),
        Turn.text("Two files; alpha.txt says alpha.", prompt_eval_count=2100),
    )
    agent, log, session_id = make_agent(openai_client, store, workspace)

    finished = await agent.run_user_turn("what is here?")

    assert finished.outcome is Outcome.COMPLETE
    assert finished.response == "Two files; alpha.txt says alpha."
    assert [(e.name, e.status) for e in log.of(ToolFinished)] == [
        ("list_files", "completed"),
        ("read_file", "completed"),
    ]
    first, second = openai_fake.chat_bodies
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert {t["function"]["name"] for t in first["tools"]} >= {"list_files", "finish"}
    assert first["max_tokens"] == agent.settings.num_predict
    sent = second["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool"]
    assistant = sent[2]
    assert assistant["content"] is None
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_list_1", "call_read_2"]
    assert all(c["type"] == "function" for c in assistant["tool_calls"])
    arguments = [c["function"]["arguments"] for c in assistant["tool_calls"]]
    assert all(isinstance(a, str) for a in arguments)  # JSON text on this wire
    assert [json.loads(a) for a in arguments] == [{"path": "."}, {"path": "alpha.txt"}]
    assert [m["tool_call_id"] for m in sent[3:]] == ["call_list_1", "call_read_2"]
    assert "alpha.txt" in sent[3]["content"] and "beta.py" in sent[3]["content"]
    assert sent[4]["content"].startswith("alpha")
    assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in openai_fake.requests)

    # The session keeps Ollama's form (dict arguments), whatever the backend.
    data = store.load(session_id, workspace, "coding")
    stored = [m for m in data.messages if m["role"] == "assistant" and m.get("tool_calls")]
    assert stored[0]["tool_calls"][1]["function"]["arguments"] == {"path": "alpha.txt"}
    assert KEY not in json.dumps(data.messages)


async def test_a_refused_key_ends_the_turn_with_the_fix_and_without_the_key(
    openai_fake: FakeOpenAI, store: SessionStore, workspace: Path
) -> None:
    async with OpenAIClient(openai_fake.base_url, api_key="sk-wrong-0000") as wrong:
        agent, log, _ = make_agent(wrong, store, workspace)
        finished = await agent.run_user_turn("hi")
    assert finished.outcome is Outcome.ERROR
    (error,) = log.of(ErrorNotice)
    assert "refused the API key (HTTP 401); check ZCODER_API_KEY" in error.text
    assert "sk-wrong-0000" not in error.text
