"""Compaction's summary request is sized and bounded as every turn is: its output limit
fits what the window leaves (vLLM refuses one that does not), and a server that streams
keep-alives or content without end cannot hold it (zcoder.model.watch).

The bounds are set small here; nothing is timed: the tests wait for the outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.support import Harness, make_agent
from tests.fixtures.fake_ollama import Turn, count_tokens
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.agent.usage import MIN_OUTPUT_TOKENS
from zcoder.model import OpenAIClient
from zcoder.model.watch import ModelStalled, ReplyTooLong
from zcoder.sessions import SessionStore

IDLE = 0.3
CAP = 400
WINDOW = 8192
SUMMARY = "Goals: explain the project. Open work: none."


async def _three_turns(harness: Harness) -> None:
    for text in ("first", "second", "third"):
        harness.server.enqueue(Turn.text(f"answer to {text}"))
        await harness.agent.run_user_turn(f"{text} request")


async def test_a_summary_request_that_only_gets_keep_alives_ends_at_the_idle_deadline(
    harness: Harness,
) -> None:
    await _three_turns(harness)
    before = list(harness.agent.messages)
    harness.agent.settings.idle_timeout = IDLE
    harness.server.enqueue(Turn.keepalive(before="Goals:"))
    with pytest.raises(ModelStalled, match=f"no new output for {IDLE:g} seconds"):
        await harness.agent.compact()
    assert harness.server.wait_for_disconnect()  # the response was closed
    assert harness.agent.messages == before  # nothing was compacted
    assert harness.load().messages == before


async def test_a_summary_without_end_is_stopped_at_the_reply_cap(harness: Harness) -> None:
    await _three_turns(harness)
    before = list(harness.agent.messages)
    harness.agent.settings.max_reply_chars = CAP
    harness.server.enqueue(Turn.endless(before="Goals: "))
    with pytest.raises(ReplyTooLong, match=f"passed {CAP:,} characters without ending"):
        await harness.agent.compact()
    assert harness.server.wait_for_disconnect()
    assert harness.agent.messages == before


@pytest.fixture
def openai_options() -> dict[str, Any]:
    return {"flavor": "vllm", "context_length": WINDOW, "enforce_window": True}


async def test_an_8k_window_with_8k_output_tokens_can_still_compact_on_vllm(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, store: SessionStore, workspace: Path
) -> None:
    agent, _log, _ = make_agent(openai_client, store, workspace)
    agent.settings.num_ctx = WINDOW
    agent.settings.num_predict = 8192  # ZCODER_MAX_OUTPUT_TOKENS's default
    for text in ("first", "second", "third"):
        openai_fake.enqueue(Turn.text(f"answer to {text}" + " with details" * 100))
        await agent.run_user_turn(f"{text} request " * 50)
    openai_fake.enqueue(Turn.text(SUMMARY))

    result = await agent.compact()

    assert result.compacted, result.text
    summariser = openai_fake.chat_bodies[-1]
    assert "first request" in summariser["messages"][1]["content"]
    assert MIN_OUTPUT_TOKENS <= summariser["max_tokens"] < 8192
    assert count_tokens(summariser) + summariser["max_tokens"] <= WINDOW
