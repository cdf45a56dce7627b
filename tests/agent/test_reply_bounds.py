"""A server that never finishes cannot hold a turn: an idle deadline (keep-alives do not
count as progress) and an output cap end the reply with a clear error, close the
connection, and keep what streamed as a partial reply (issue 18 item 5).

The bounds are set small here; nothing is timed: the tests wait for the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.support import EventLog, Harness, make_agent
from tests.fixtures.fake_ollama import ENDLESS_PIECE, Turn
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.agent import AssistantMessage, ErrorNotice, Outcome
from zcoder.model import OpenAIClient
from zcoder.sessions import SessionStore

IDLE = 0.3
CAP = 400


def errors(log: EventLog) -> list[str]:
    return [event.text for event in log.of(ErrorNotice)]


async def ends_in_error(harness: Harness, reply: Turn, prompt: str, error: str, fix: str) -> None:
    """A turn the server answers with ``reply`` ends in an error that says ``error`` and
    names the setting to change, ``fix``, and the response is closed."""
    harness.server.enqueue(reply)
    finished = await harness.agent.run_user_turn(prompt)
    assert finished.outcome is Outcome.ERROR
    assert error in finished.error
    assert fix in finished.error
    assert harness.server.wait_for_disconnect()  # the response was closed


async def test_ollama_keep_alives_without_output_end_the_turn_at_the_idle_deadline(
    harness: Harness,
) -> None:
    harness.agent.settings.idle_timeout = IDLE
    reply = Turn.keepalive(before="Let me think")
    error = f"no new output for {IDLE:g} seconds"
    await ends_in_error(harness, reply, "hi", error, "ZCODER_IDLE_TIMEOUT")
    assert AssistantMessage("Let me think", partial=True) in harness.log.of(AssistantMessage)
    assert any("no new output" in text for text in errors(harness.log))
    assert harness.server.pending == 0  # not asked again: one stalled request only


async def test_content_without_end_is_stopped_at_the_output_cap(harness: Harness) -> None:
    harness.agent.settings.max_reply_chars = CAP
    reply = Turn.endless(before="Counting: ")
    error = f"passed {CAP:,} characters without ending"
    await ends_in_error(harness, reply, "count for ever", error, "ZCODER_MAX_REPLY_CHARS")
    (partial,) = harness.log.of(AssistantMessage)
    assert partial.partial and partial.text.startswith("Counting: " + ENDLESS_PIECE)
    assert len(partial.text) <= CAP + len(ENDLESS_PIECE)
    stored = [e for e in harness.load().events if e.role == "error"]
    assert any("without ending" in e.text for e in stored)


@pytest.mark.parametrize("ending", ["keepalive", "endless"])
async def test_sse_pings_and_endless_chunks_are_bounded_on_the_openai_backend(
    openai_fake: FakeOpenAI,
    openai_client: OpenAIClient,
    store: SessionStore,
    workspace: Path,
    ending: str,
) -> None:
    agent, _log, _ = make_agent(openai_client, store, workspace)
    if ending == "keepalive":
        agent.settings.idle_timeout = IDLE
        openai_fake.enqueue(Turn.keepalive())
    else:  # only the cap: a pause under load must not end it first
        agent.settings.max_reply_chars = CAP
        openai_fake.enqueue(Turn.endless())
    finished = await agent.run_user_turn("hi")
    assert finished.outcome is Outcome.ERROR
    expected = "no new output" if ending == "keepalive" else "without ending"
    assert expected in finished.error
    assert openai_fake.wait_for_disconnect()
