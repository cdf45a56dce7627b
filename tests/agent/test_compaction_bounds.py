"""Compaction's summary request is sized and bounded as every turn is: its output limit
fits what the window leaves (vLLM refuses one that does not), and a server that streams
keep-alives or content without end cannot hold it (zcoder.model.watch).

The bounds are set small here; nothing is timed: the tests wait for the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.support import Harness, agent_in_a_window, on_vllm
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


@pytest.mark.parametrize(
    ("setting", "bound", "summary", "error", "message"),
    [
        pytest.param(
            "idle_timeout",
            IDLE,
            Turn.keepalive(before="Goals:"),
            ModelStalled,
            f"no new output for {IDLE:g} seconds",
            id="only-keep-alives-end-at-the-idle-deadline",
        ),
        pytest.param(
            "max_reply_chars",
            CAP,
            Turn.endless(before="Goals: "),
            ReplyTooLong,
            f"passed {CAP:,} characters without ending",
            id="no-end-is-stopped-at-the-reply-cap",
        ),
    ],
)
async def test_a_summary_request_that_never_ends_is_bounded(
    harness: Harness,
    setting: str,
    bound: float,
    summary: Turn,
    error: type[Exception],
    message: str,
) -> None:
    await _three_turns(harness)
    before = list(harness.agent.messages)
    setattr(harness.agent.settings, setting, bound)
    harness.server.enqueue(summary)
    with pytest.raises(error, match=message):
        await harness.agent.compact()
    assert harness.server.wait_for_disconnect()  # the response was closed
    assert harness.agent.messages == before  # nothing was compacted
    assert harness.load().messages == before


@on_vllm(WINDOW)
async def test_an_8k_window_with_8k_output_tokens_can_still_compact_on_vllm(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, store: SessionStore, workspace: Path
) -> None:
    agent = agent_in_a_window(openai_client, store, workspace, WINDOW)
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
