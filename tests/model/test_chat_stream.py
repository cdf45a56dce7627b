"""Streaming replies from the fake Ollama over real HTTP, and what the client sends (what
every backend must do is tests/model/contract's)."""

from typing import Any

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.model_clients import HELLO, LIST_FILES_SCHEMA, MODEL, collect, reply_of
from zcoder.model import (
    Done,
    OllamaClient,
    tool_result_message,
)


async def test_done_carries_counts_and_reason(fake: FakeOllama, client: OllamaClient):
    fake.enqueue(Turn.text("cut", done_reason="length", prompt_eval_count=321, eval_count=7))
    done = (await collect(client))[-1]
    assert isinstance(done, Done)
    assert done.done_reason == "length"
    assert done.prompt_eval_count == 321
    assert done.eval_count == 7
    assert done.total_duration is not None and done.total_duration > 0


async def test_tool_calls_split_over_records_accumulate_in_order(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(
        Turn.tool_calls(call("a", {}, id="id_a"), call("b", {}, id="id_b"), separate_lines=True)
    )
    reply = reply_of(await collect(client))
    assert [c.id for c in reply.tool_calls] == ["id_a", "id_b"]


async def test_missing_ids_get_stable_generated_ones(fake: FakeOllama, client: OllamaClient):
    turn = Turn.tool_calls(call("a", {"n": 1}, id=None), call("b", {"n": 2}, id=None))
    fake.enqueue(turn, turn)
    first = reply_of(await collect(client)).tool_calls
    second = reply_of(await collect(client)).tool_calls
    assert [c.id for c in first] == ["call_0", "call_1"]
    assert [c.id for c in second] == [c.id for c in first]


async def test_arguments_as_object_and_as_json_string_both_parse(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(
        Turn.tool_calls(
            call("write_file", {"path": "a.txt", "content": "x"}),
            call("write_file", '{"path": "b.txt", "content": "y"}'),
            call("finish", ""),
        )
    )
    calls = reply_of(await collect(client)).tool_calls
    assert calls[0].arguments == {"path": "a.txt", "content": "x"}
    assert calls[1].arguments == {"path": "b.txt", "content": "y"}
    assert calls[2].arguments == {}
    assert all(c.arguments_error is None for c in calls)


async def test_unparseable_argument_string_becomes_an_error_for_the_model(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(
        Turn.tool_calls(call("read_file", '{"path": "a.txt"', id="c1"), call("read_file", "[1]"))
    )
    calls = reply_of(await collect(client)).tool_calls
    assert calls[0].id == "c1"
    assert calls[0].arguments == {}
    assert calls[0].raw_arguments == '{"path": "a.txt"'
    assert calls[0].arguments_error is not None
    assert "not valid JSON" in calls[0].arguments_error
    assert calls[1].arguments_error is not None
    assert "must be a JSON object" in calls[1].arguments_error


async def test_request_body_carries_tools_think_and_num_predict(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.text("ok"))
    await collect(client, tools=[LIST_FILES_SCHEMA], think=False, num_predict=8192)
    [body] = fake.chat_bodies
    assert body["model"] == MODEL
    assert body["stream"] is True
    assert body["messages"] == HELLO
    assert body["tools"] == [LIST_FILES_SCHEMA]
    assert body["think"] is False
    assert body["options"] == {"num_predict": 8192}


async def test_request_body_omits_unset_think_tools_and_options(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.text("ok"))
    await collect(client)
    [body] = fake.chat_bodies
    assert "think" not in body
    assert "tools" not in body
    assert "options" not in body


async def test_history_round_trips_tool_call_ids_to_the_next_request(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(
        Turn.tool_calls(
            call("list_files", {"path": "."}, id="call_x1"),
            call("list_files", {"path": "src"}, id="call_x2"),
            thinking="I should look.",
        ),
        Turn.text("Two folders."),
    )
    history: list[dict[str, Any]] = list(HELLO)
    reply = reply_of(await collect(client, history, tools=[LIST_FILES_SCHEMA]))
    history.append(reply.to_message())
    for tool_call in reply.tool_calls:
        history.append(tool_result_message(tool_call, f"files of {tool_call.arguments['path']}"))
    await collect(client, history, tools=[LIST_FILES_SCHEMA])

    sent = fake.chat_bodies[1]["messages"]
    assistant, first_result, second_result = sent[-3:]
    assert assistant["role"] == "assistant"
    assert assistant["thinking"] == "I should look."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_x1", "call_x2"]
    assert assistant["tool_calls"][1]["function"] == {
        "name": "list_files",
        "arguments": {"path": "src"},
        "index": 1,
    }
    assert first_result == {
        "role": "tool",
        "content": "files of .",
        "tool_call_id": "call_x1",
        "tool_name": "list_files",
    }
    assert second_result["tool_call_id"] == "call_x2"
