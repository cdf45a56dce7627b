"""The OpenAI-compatible stream parser, chunk by chunk, and the history conversion.

The chunks have the shapes llama.cpp's llama-server, vLLM and LM Studio send: tool calls
split by ``index`` (id and name first, the arguments in pieces), ``reasoning_content``
(llama.cpp, older vLLM) or ``reasoning`` (newer vLLM), ``finish_reason`` in its own chunk,
``usage`` in a last chunk with no choices, then ``data: [DONE]``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fixtures.model_clients import reply_of
from zcoder.model import (
    ChatEvent,
    ContentDelta,
    Done,
    ModelStreamError,
    OpenAIStreamParser,
    ReasoningDelta,
    ToolCall,
    ToolCallsReceived,
    assistant_message,
    build_openai_request,
    system_message,
    to_openai_messages,
    tool_result_message,
    user_message,
)


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return "data: " + json.dumps(
        {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": choices, **extra}
    )


def feed(*events: str, finish: bool = True) -> list[ChatEvent]:
    """Each SSE event followed by its blank line, as servers send them."""
    parser = OpenAIStreamParser()
    out: list[ChatEvent] = []
    for event in events:
        for line in [*event.split("\n"), ""]:
            out += parser.feed_line(line)
    if finish:
        out += parser.finish()
    return out


def piece(index: int, **fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, **fields}]}


DONE = "data: [DONE]"
USAGE = chunk(None, usage={"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290})


def test_split_tool_calls_are_joined_by_index_with_their_ids() -> None:
    events = feed(
        chunk({"role": "assistant", "content": None}),
        chunk(piece(0, id="call_aaa", type="function", function={"name": "read_file"})),
        chunk(piece(0, function={"arguments": '{"pa'})),
        chunk(piece(0, function={"arguments": 'th": "src/'})),
        chunk(piece(0, function={"arguments": 'main.py"}'})),
        chunk(piece(1, id="call_bbb", type="function", function={"name": "search"})),
        chunk(piece(1, function={"arguments": '{"query": "TODO"'})),
        chunk(piece(1, function={"arguments": "}"})),
        chunk({}, "tool_calls"),
        USAGE,
        DONE,
    )
    received = [e for e in events if isinstance(e, ToolCallsReceived)]
    assert len(received) == 1  # once, complete, when the choice finished
    first, second = received[0].calls
    assert (first.id, first.name, first.arguments) == (
        "call_aaa",
        "read_file",
        {"path": "src/main.py"},
    )
    assert (second.id, second.name, second.arguments) == ("call_bbb", "search", {"query": "TODO"})
    assert first.arguments_error is None and second.arguments_error is None
    done = events[-1]
    assert isinstance(done, Done)
    assert done.done_reason == "stop"  # "tool_calls" is an ordinary stop for the agent


def test_interleaved_pieces_of_parallel_calls_go_to_their_own_call() -> None:
    events = feed(
        chunk(piece(0, id="a", function={"name": "list_files", "arguments": ""})),
        chunk(piece(1, id="b", function={"name": "list_files", "arguments": '{"path":'})),
        chunk(piece(0, function={"arguments": '{"path": "src"}'})),
        chunk(piece(1, function={"arguments": ' "tests"}'})),
        chunk({}, "tool_calls"),
        DONE,
    )
    calls = reply_of(events).tool_calls
    assert [(c.id, c.arguments) for c in calls] == [
        ("a", {"path": "src"}),
        ("b", {"path": "tests"}),
    ]


def test_a_call_without_an_id_gets_one_and_an_id_repeated_in_every_piece_is_kept_once() -> None:
    events = feed(
        chunk(piece(0, function={"name": "list_files", "arguments": "{}"})),
        chunk(piece(1, id="call_x", function={"name": "search", "arguments": '{"query"'})),
        chunk(piece(1, id="call_x", function={"arguments": ': "a"}'})),
        chunk({}, "tool_calls"),
        DONE,
    )
    calls = reply_of(events).tool_calls
    assert [c.id for c in calls] == ["call_0", "call_x"]
    assert calls[1].arguments == {"query": "a"}


def test_whole_calls_without_index_are_told_apart_by_id() -> None:
    events = feed(
        chunk(
            {
                "tool_calls": [
                    {"id": "c1", "function": {"name": "list_files", "arguments": "{}"}},
                    {"id": "c2", "function": {"name": "read_file", "arguments": {"path": "a"}}},
                ]
            },
            "tool_calls",
        ),
        DONE,
    )
    calls = reply_of(events).tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c1", "list_files", {}),
        ("c2", "read_file", {"path": "a"}),
    ]


def test_bad_arguments_become_an_error_for_the_model_not_a_crash() -> None:
    events = feed(
        chunk(piece(0, id="c", function={"name": "read_file", "arguments": '{"path": '})),
        chunk({}, "tool_calls"),
        DONE,
    )
    (call,) = reply_of(events).tool_calls
    assert call.arguments == {}
    assert call.arguments_error is not None and "not valid JSON" in call.arguments_error


def test_reasoning_content_and_reasoning_become_thinking_before_the_answer() -> None:
    events = feed(
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "The user wants "}),
        chunk({"reasoning": "a greeting."}),  # newer vLLM's name for it
        chunk({"content": "Hello"}),
        chunk({"content": " there."}),
        chunk({}, "stop"),
        DONE,
    )
    kinds = [type(e) for e in events]
    assert kinds == [ReasoningDelta, ReasoningDelta, ContentDelta, ContentDelta, Done]
    reply = reply_of(events)
    assert (reply.thinking, reply.content) == ("The user wants a greeting.", "Hello there.")


def test_usage_in_the_last_chunk_gives_the_token_counts() -> None:
    events = feed(chunk({"content": "ok"}), chunk({}, "stop"), USAGE, DONE)
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.prompt_eval_count, done.eval_count) == (1234, 56)


def test_usage_in_the_finishing_chunk_counts_too() -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 3}
    events = feed(chunk({"content": "ok"}, "stop", usage=usage), DONE)
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.prompt_eval_count, done.eval_count) == (7, 3)


def test_without_usage_the_counts_are_unknown() -> None:
    done = feed(chunk({"content": "ok"}, "stop"), DONE)[-1]
    assert isinstance(done, Done)
    assert (done.done_reason, done.prompt_eval_count, done.eval_count) == ("stop", None, None)


def test_finish_reason_length_stays_length() -> None:
    done = feed(chunk({"content": "The first half"}), chunk({}, "length"), USAGE, DONE)[-1]
    assert isinstance(done, Done)
    assert done.done_reason == "length"


def test_exactly_one_done_and_nothing_after_done_marker() -> None:
    parser = OpenAIStreamParser()
    events = []
    for line in [chunk({"content": "a"}, "stop"), "", DONE, "", chunk({"content": "late"}), ""]:
        events += parser.feed_line(line)
    assert parser.done
    assert [type(e) for e in events] == [ContentDelta, Done]


def test_comments_event_names_and_crlf_are_tolerated() -> None:
    parser = OpenAIStreamParser()
    events = []
    for line in [": keep-alive", "", "event: message", chunk({"content": "hi"}) + "\r", "\r"]:
        events += parser.feed_line(line)
    events += parser.feed_line(DONE) + parser.feed_line("")
    assert [type(e) for e in events] == [ContentDelta, Done]


def test_a_reply_that_finished_but_had_no_done_marker_is_accepted() -> None:
    events = feed(chunk({"content": "ok"}, "stop"))
    assert isinstance(events[-1], Done)


def test_a_stream_that_ends_before_the_reply_finished_is_an_error() -> None:
    with pytest.raises(ModelStreamError, match="closed the stream before the reply was done"):
        feed(chunk({"content": "half"}))


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ("data: {not json", "malformed response from the server"),
        ("data: [1, 2]", "not an object"),
        ('data: {"choices": {"index": 0}}', "'choices' is not a list"),
        ("garbage line", "not server-sent events"),
        (
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}, "tool_calls"),
            "no name",
        ),
    ],
)
def test_malformed_chunks_raise_a_stream_error(event: str, message: str) -> None:
    with pytest.raises(ModelStreamError, match=message):
        feed(event, DONE)


def test_an_error_record_mid_stream_is_reported_with_its_message() -> None:
    error = 'data: {"error": {"message": "context size exceeded", "type": "server_error"}}'
    with pytest.raises(ModelStreamError, match="reported an error mid-stream: context size"):
        feed(chunk({"content": "par"}), error)


def test_a_complete_non_streamed_answer_is_read_too() -> None:
    parser = OpenAIStreamParser()
    record = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c9",
                            "type": "function",
                            "function": {"name": "list_files", "arguments": '{"path": "."}'},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
    }
    events = parser.feed_record(record) + parser.finish()
    reply = reply_of(events)
    assert [(c.id, c.arguments) for c in reply.tool_calls] == [("c9", {"path": "."})]
    assert reply.done is not None and reply.done.prompt_eval_count == 10


# -- the history, Ollama's form → OpenAI's ------------------------------------------------


def test_history_conversion_gives_functions_json_arguments_and_tool_call_ids() -> None:
    calls = [
        ToolCall(id="call_1", name="read_file", arguments={"path": "a.py"}, index=0),
        ToolCall(id="call_2", name="list_files", arguments={}, index=1),
    ]
    history = [
        system_message("You are zcoder."),
        user_message("look"),
        assistant_message("", calls, thinking="I should read it."),
        tool_result_message(calls[0], "print(1)"),
        tool_result_message(calls[1], "a.py"),
        assistant_message("Done, a.py prints 1."),
    ]
    assert to_openai_messages(history) == [
        {"role": "system", "content": "You are zcoder."},
        {"role": "user", "content": "look"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "list_files", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "print(1)"},
        {"role": "tool", "tool_call_id": "call_2", "content": "a.py"},
        {"role": "assistant", "content": "Done, a.py prints 1."},
    ]
    # The history itself is untouched: sessions keep Ollama's form.
    assert history[2]["tool_calls"][0]["function"]["arguments"] == {"path": "a.py"}


def test_history_conversion_keeps_text_beside_calls_and_fills_missing_ids_in_order() -> None:
    history: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {"function": {"name": "list_files", "arguments": {}}},
                {"function": {"name": "read_file", "arguments": {"path": "x"}}},
            ],
        },
        {"role": "tool", "content": "x", "tool_name": "list_files"},
        {"role": "tool", "content": "body", "tool_name": "read_file"},
    ]
    converted = to_openai_messages(history)
    assert converted[0]["content"] == "Let me look."
    assert [c["id"] for c in converted[0]["tool_calls"]] == ["call_0", "call_1"]
    assert [m["tool_call_id"] for m in converted[1:]] == ["call_0", "call_1"]
    assert all("tool_name" not in m for m in converted)


def test_the_request_body_asks_for_usage_and_maps_the_options() -> None:
    tools = [{"type": "function", "function": {"name": "finish", "parameters": {}}}]
    body = build_openai_request(
        "m",
        [user_message("hi")],
        tools=tools,
        think=False,
        num_predict=512,
        options={"temperature": 0.2, "num_ctx": 32768},
    )
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": tools,
        "temperature": 0.2,
        "max_tokens": 512,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    plain = build_openai_request("m", [user_message("hi")])
    assert "max_tokens" not in plain and "tools" not in plain
    assert "chat_template_kwargs" not in plain
