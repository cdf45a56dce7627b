"""The ModelClient contract (zcoder.model.protocol), one suite for every backend: a reply
streams and ends with exactly one Done; tool calls arrive whole with their ids; the model
is listed; a warm-up loads it without a turn; errors are ModelErrors that say what broke;
closing or cancelling a stream hangs up; a closed client sends nothing more.

``backend`` runs a test against the fake Ollama, the fake OpenAI-compatible server and
the real embedded llama.cpp server (marked ``real``); ``scripted`` against the two fakes,
for what only a script can show (tests/model/contract/conftest.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.model_clients import HELLO, LIST_FILES_SCHEMA, reply_of
from tests.model.contract.conftest import Backend
from zcoder.model import (
    ChatEvent,
    ContentDelta,
    Done,
    Message,
    ModelConnectionError,
    ModelHTTPError,
    ModelStreamError,
    ReasoningDelta,
    ToolCallsReceived,
    system_message,
    user_message,
)

REAL_LIMIT = 8
"""Tokens a real reply may take where a few show the stream (num_predict)."""
LONG_REPLY = [system_message("You are a test."), user_message("Count from 1 to 200.")]
"""A request the real model answers at length: a stream that is still open when the
test closes it or cancels its task."""


async def events_of(
    backend: Backend, messages: Sequence[Message] = HELLO, **params: Any
) -> list[ChatEvent]:
    """Every event of one streamed reply."""
    return [event async for event in backend.client.chat(backend.model, messages, **params)]


async def hung_up(backend: Backend) -> None:
    """The request the test stopped is over: the fake saw the client hang up; the real
    server answers the next request to its end."""
    if backend.fake is not None:
        assert await asyncio.to_thread(backend.fake.wait_for_disconnect, 5.0)
    else:
        assert isinstance((await events_of(backend, num_predict=REAL_LIMIT))[-1], Done)


# -- chat streaming --------------------------------------------------------------------------


async def test_a_reply_streams_in_pieces_then_exactly_one_done(backend: Backend) -> None:
    backend.script(Turn.text("Hello there, world"))
    events = await events_of(backend, num_predict=REAL_LIMIT)
    pieces = [e.text for e in events if isinstance(e, ContentDelta | ReasoningDelta)]
    assert pieces and all(pieces)
    assert isinstance(events[-1], Done)
    assert sum(isinstance(e, Done) for e in events) == 1
    if backend.fake is not None:
        deltas = [e.text for e in events if isinstance(e, ContentDelta)]
        assert len(deltas) == 3
        assert "".join(deltas) == "Hello there, world"


async def test_thinking_streams_before_content(scripted: Backend) -> None:
    scripted.script(Turn.thinking("Let me see.", "The answer."))
    events = await events_of(scripted, think=True)
    kinds = [type(e) for e in events]
    assert kinds.index(ReasoningDelta) < kinds.index(ContentDelta)
    reply = reply_of(events)
    assert reply.thinking == "Let me see."
    assert reply.content == "The answer."


async def test_one_client_serves_consecutive_requests(backend: Backend) -> None:
    backend.script(Turn.text("one"), Turn.text("two"), Turn.text("three"))
    replies = [await events_of(backend, num_predict=REAL_LIMIT) for _ in range(3)]
    assert all(isinstance(events[-1], Done) for events in replies)
    if backend.fake is not None:
        assert [reply_of(events).content for events in replies] == ["one", "two", "three"]


# -- tool calls ----------------------------------------------------------------------------

CALLS = {
    "three calls": [
        ("call_aaa", "list_files", {"path": "."}),
        ("call_bbb", "read_file", {"path": "README.md"}),
        ("call_ccc", "list_files", {"path": "src"}),
    ],
    "two calls": [
        ("call_aaa", "list_files", {"path": "src/zcoder"}),
        ("call_bbb", "read_file", {"path": "README.md"}),
    ],
}


@pytest.mark.parametrize("calls", CALLS.values(), ids=list(CALLS))
async def test_tool_calls_arrive_once_whole_in_order_with_their_ids(
    scripted: Backend, calls: list[tuple[str, str, dict[str, Any]]]
) -> None:
    scripted.script(Turn.tool_calls(*(call(name, args, id=id_) for id_, name, args in calls)))
    events = await events_of(scripted, tools=[LIST_FILES_SCHEMA])
    received = [e for e in events if isinstance(e, ToolCallsReceived)]
    assert len(received) == 1
    got = received[0].calls
    assert [(c.id, c.name, c.arguments) for c in got] == calls
    assert [c.index for c in got] == list(range(len(calls)))
    assert all(c.arguments_error is None for c in got)
    assert reply_of(events).tool_calls == got
    assert isinstance(events[-1], Done) and events[-1].done_reason == "stop"


# -- list models, warm up ------------------------------------------------------------------


async def test_the_model_is_among_the_listed_models(backend: Backend) -> None:
    names = await backend.client.list_models()
    assert backend.model in {name.removesuffix(":latest") for name in names}


async def test_a_warm_up_loads_the_model_and_takes_no_turn(backend: Backend) -> None:
    prefix = [system_message("You are a test.")]
    await backend.client.warm_up(backend.model, prefix, tools=[LIST_FILES_SCHEMA])
    if backend.fake is not None:
        assert len(backend.fake.load_requests) == 1
        assert backend.fake.chat_bodies == [] and backend.fake.pending == 0
    backend.script(Turn.text("ready"))
    assert isinstance((await events_of(backend, num_predict=REAL_LIMIT))[-1], Done)


# -- errors ----------------------------------------------------------------------------------


async def test_a_server_error_names_its_status_and_the_servers_words(scripted: Backend) -> None:
    scripted.script(Turn.http_error(500, "slot unavailable"))
    with pytest.raises(ModelHTTPError) as caught:
        await events_of(scripted)
    assert "HTTP 500" in str(caught.value) and "slot unavailable" in str(caught.value)


async def test_an_error_mid_stream_is_a_stream_error_after_the_earlier_pieces(
    scripted: Backend,
) -> None:
    scripted.script(Turn.error_midstream("the context is full", before="partial "))
    seen: list[ChatEvent] = []
    with pytest.raises(ModelStreamError) as caught:
        async for event in scripted.client.chat(scripted.model, HELLO):
            seen.append(event)
    assert seen == [ContentDelta("partial ")]
    assert "the context is full" in str(caught.value)
    assert not caught.value.retryable_before_response


async def test_a_malformed_stream_is_a_stream_error(scripted: Backend) -> None:
    scripted.script(Turn.malformed("{this is not json", before="Hello"))
    with pytest.raises(ModelStreamError, match="malformed response from"):
        await events_of(scripted)


async def test_a_dropped_connection_mid_reply_is_not_retryable(scripted: Backend) -> None:
    scripted.script(Turn.disconnect(before="some words"))
    with pytest.raises(ModelConnectionError) as caught:
        await events_of(scripted)
    assert "during the reply" in str(caught.value)
    assert not caught.value.retryable_before_response


# -- cancellation and closing ----------------------------------------------------------------


async def test_closing_the_stream_early_hangs_up(backend: Backend) -> None:
    backend.script(Turn.stall(before="one two three"))
    async with contextlib.aclosing(
        backend.client.chat(backend.model, LONG_REPLY, num_predict=64)
    ) as events:
        async for _event in events:
            break
    await hung_up(backend)


async def test_cancelling_the_task_reading_a_stream_hangs_up(backend: Backend) -> None:
    backend.script(Turn.stall(before="Thinking about it"))
    first_piece = asyncio.Event()

    async def consume() -> None:
        async for _event in backend.client.chat(backend.model, LONG_REPLY, num_predict=64):
            first_piece.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_piece.wait(), timeout=120)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=10)
    await hung_up(backend)


async def test_a_closed_client_sends_nothing_more(backend: Backend) -> None:
    await backend.client.list_models()
    await backend.client.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await events_of(backend)
    with pytest.raises(RuntimeError, match="closed"):
        await backend.client.list_models()
    if backend.fake is not None:
        assert len(backend.fake.requests) == 1  # the list before the close
    await backend.client.aclose()  # closing again is harmless


async def test_a_text_model_is_never_said_to_take_images(backend: Backend) -> None:
    said = await backend.client.vision_support(backend.model)
    assert said is not True
    if backend.fake is None:
        assert said is False  # llama.cpp's /props says so: modalities.vision is false


async def test_a_vision_server_says_so(scripted: Backend) -> None:
    assert scripted.fake is not None
    scripted.fake.vision = True
    assert await scripted.client.vision_support(scripted.model) is True
