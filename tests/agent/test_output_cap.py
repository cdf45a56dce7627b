"""The requested output limit fits what the window leaves after the prompt (issue 18
item 19): vLLM refuses a request whose prompt and max_tokens pass its window, and /context
says what the cap is."""

from __future__ import annotations

from pathlib import Path

from tests.agent.support import agent_in_a_window, on_vllm
from tests.fixtures.fake_ollama import Turn, count_tokens
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.agent import Outcome
from zcoder.agent.usage import MIN_OUTPUT_TOKENS, output_cap, render_breakdown
from zcoder.model import OpenAIClient
from zcoder.sessions import SessionStore

WINDOW = 8192


@on_vllm(WINDOW)
async def test_an_8k_window_with_8k_output_tokens_still_gets_an_answer_from_vllm(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, store: SessionStore, workspace: Path
) -> None:
    agent = agent_in_a_window(openai_client, store, workspace, WINDOW)
    openai_fake.enqueue(Turn.text("fine"))
    finished = await agent.run_user_turn("explain this project " * 50)

    assert finished.outcome is Outcome.COMPLETE, finished.error
    (body,) = openai_fake.chat_bodies
    assert MIN_OUTPUT_TOKENS <= body["max_tokens"] < 8192
    assert count_tokens(body) + body["max_tokens"] <= WINDOW
    # Once the server has counted, the estimate is scaled by its count: still within.
    openai_fake.enqueue(Turn.text("again"))
    finished = await agent.run_user_turn("and the tests? " * 50)
    assert finished.outcome is Outcome.COMPLETE, finished.error
    last = openai_fake.chat_bodies[-1]
    assert count_tokens(last) + last["max_tokens"] <= WINDOW


@on_vllm(WINDOW)
async def test_context_names_the_output_cap_the_window_leaves(
    openai_client: OpenAIClient, store: SessionStore, workspace: Path
) -> None:
    agent = agent_in_a_window(openai_client, store, workspace, WINDOW)
    breakdown = agent.context_breakdown()
    expected = output_cap(WINDOW, breakdown.total, 8192, measured=False)
    assert expected is not None and expected < 8192
    text = render_breakdown(breakdown, "the server reports 8192")
    assert f"Output cap: {expected:,} tokens (the window leaves {expected:,}; " in text
    assert "ZCODER_MAX_OUTPUT_TOKENS is 8,192" in text


def test_the_cap_keeps_the_setting_when_the_window_has_room_and_never_drops_below_the_floor():
    assert output_cap(65536, 3000, 8192) == 8192
    assert output_cap(8192, 2000, 8192) == 8192 - 2000 - int(8192 * 0.03)
    assert output_cap(8192, 8000, 8192) == MIN_OUTPUT_TOKENS
    assert output_cap(8192, 2000, 8192, measured=False) == 8192 - 3000 - int(8192 * 0.03)
    assert output_cap(None, 8000, 8192) == 8192
    assert output_cap(8192, 100, None) is None


@on_vllm(WINDOW)
async def test_a_reply_cut_at_the_lowered_cap_says_the_window_is_what_to_grow(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, store: SessionStore, workspace: Path
) -> None:
    agent = agent_in_a_window(openai_client, store, workspace, WINDOW)
    openai_fake.enqueue(Turn.text("The answer starts", done_reason="length", eval_count=10))
    finished = await agent.run_user_turn("explain")
    assert finished.outcome is Outcome.INCOMPLETE
    (body,) = openai_fake.chat_bodies
    assert f"cut off at {body['max_tokens']:,} tokens, all the context window" in finished.error
    assert "ZCODER_MAX_OUTPUT_TOKENS" not in finished.error
    assert "/compact" in finished.error
