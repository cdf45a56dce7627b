"""The context meter's numbers and a cut-off reply, through the fake Ollama."""

from __future__ import annotations

from tests.agent.support import Harness
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import ContextUsage, ErrorNotice, Outcome
from zcoder.model.tokens import estimate_request_tokens, estimate_tokens


async def test_the_meter_estimates_before_the_first_reply_then_shows_the_servers_count(
    harness: Harness,
) -> None:
    harness.agent.settings.num_ctx = 16384
    harness.server.enqueue(
        Turn.tool_calls(call("list_files", {"path": "."}), prompt_eval_count=1500, eval_count=40),
        Turn.text("two files", prompt_eval_count=1700, eval_count=12),
    )
    await harness.agent.run_user_turn("what is here?")
    readings = harness.log.of(ContextUsage)
    first_request = harness.bodies()[0]
    estimate = estimate_request_tokens(first_request["messages"], first_request["tools"])
    assert readings[0] == ContextUsage(estimate, 16384, measured=False)
    assert readings[1:] == [
        ContextUsage(1540, 16384, measured=True),
        ContextUsage(1712, 16384, measured=True),
    ]
    assert readings[-1].percent == 10
    # The next turn starts from the last real count, not a new estimate.
    harness.server.enqueue(Turn.text("ok", prompt_eval_count=1800, eval_count=2))
    await harness.agent.run_user_turn("thanks")
    assert [r.measured for r in harness.log.of(ContextUsage)[3:]] == [True]
    assert harness.agent.usage_now() == ContextUsage(1802, 16384, measured=True)


async def test_estimates_are_scaled_by_the_last_real_count(harness: Harness) -> None:
    harness.server.enqueue(Turn.text("ok", prompt_eval_count=3000, eval_count=1))
    await harness.agent.run_user_turn("hello")
    body = harness.bodies()[0]
    ratio = 3000 / estimate_request_tokens(body["messages"], body["tools"])
    assert harness.agent.meter.tokens("x" * 600) == round(estimate_tokens("x" * 600) * ratio)


async def test_a_reply_cut_at_the_output_limit_is_reported_with_the_setting(
    harness: Harness,
) -> None:
    harness.agent.settings.num_ctx = 32768
    harness.agent.settings.num_predict = 512
    harness.server.enqueue(
        Turn.text("The answer begins and then", done_reason="length", eval_count=512)
    )
    finished = await harness.agent.run_user_turn("explain")
    assert finished.outcome is Outcome.INCOMPLETE
    assert "output limit of 512 tokens" in finished.error
    assert "ZCODER_MAX_OUTPUT_TOKENS" in finished.error
    assert any("ZCODER_MAX_OUTPUT_TOKENS" in e.text for e in harness.log.of(ErrorNotice))
    events = harness.load().events
    assert any(e.role == "assistant" and e.metadata.get("partial") for e in events)
    assert any(e.role == "error" and "ZCODER_MAX_OUTPUT_TOKENS" in e.text for e in events)


async def test_a_reply_cut_by_a_full_window_names_the_window_settings(harness: Harness) -> None:
    harness.agent.settings.num_ctx = 8192
    harness.server.enqueue(
        Turn.text("cut", done_reason="length", prompt_eval_count=8000, eval_count=192)
    )
    finished = await harness.agent.run_user_turn("explain")
    assert finished.outcome is Outcome.INCOMPLETE
    assert "context window of 8,192 tokens is full" in finished.error
    assert "--context-window" in finished.error and "/compact" in finished.error


async def test_tool_calls_cut_off_are_reported_and_the_turn_goes_on(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.tool_calls(call("list_files", {"path": "."}), done_reason="length"),
        Turn.text("listed"),
    )
    finished = await harness.agent.run_user_turn("list")
    assert finished.outcome is Outcome.COMPLETE
    assert any("cut off" in e.text for e in harness.log.of(ErrorNotice))
