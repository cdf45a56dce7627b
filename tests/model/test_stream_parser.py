"""ChatStreamParser record by record: the rules that are awkward to reach over HTTP."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zcoder.model import (
    AssistantReply,
    ChatStreamParser,
    ContentDelta,
    Done,
    ModelStreamError,
    ReasoningDelta,
    ToolCall,
    ToolCallsReceived,
    assistant_message,
    tool_result_message,
)


def test_blank_lines_are_ignored():
    assert ChatStreamParser().feed_line("   \r\n") == []


def test_one_record_with_thinking_content_and_done_yields_them_in_that_order():
    record = {
        "message": {"role": "assistant", "content": "hi", "thinking": "hmm"},
        "done": True,
        "done_reason": "stop",
        "eval_count": 2,
    }
    events = ChatStreamParser().feed_line(json.dumps(record))
    assert events == [ReasoningDelta("hmm"), ContentDelta("hi"), Done("stop", None, 2)]


@pytest.mark.parametrize("line", ["[1, 2]", '"text"', "{", '{"message": "x"}'])
def test_non_object_or_broken_lines_are_stream_errors(line: str):
    with pytest.raises(ModelStreamError, match="malformed"):
        ChatStreamParser().feed_line(line)


@pytest.mark.parametrize(
    "tool_calls",
    ["oops", ["oops"], [{"function": "x"}], [{"function": {"arguments": {}}}]],
)
def test_tool_calls_of_the_wrong_shape_are_stream_errors(tool_calls: object):
    record = {"message": {"role": "assistant", "tool_calls": tool_calls}, "done": False}
    with pytest.raises(ModelStreamError, match="malformed"):
        ChatStreamParser().feed_record(record)


def test_generated_ids_count_across_records_of_one_reply():
    parser = ChatStreamParser()
    ids = []
    for _ in range(3):
        record = {"message": {"tool_calls": [{"function": {"name": "f", "arguments": {}}}]}}
        [event] = parser.feed_record(record)
        assert isinstance(event, ToolCallsReceived)
        ids += [c.id for c in event.calls]
    assert ids == ["call_0", "call_1", "call_2"]


def test_non_object_arguments_are_reported_not_raised():
    record = {"message": {"tool_calls": [{"function": {"name": "f", "arguments": [1]}}]}}
    [event] = ChatStreamParser().feed_record(record)
    assert isinstance(event, ToolCallsReceived)
    [tool_call] = event.calls
    assert tool_call.arguments == {}
    assert tool_call.arguments_error is not None
    assert tool_call.raw_arguments == "[1]"


json_objects = st.dictionaries(
    st.text(min_size=1, max_size=10),
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20)),
    max_size=5,
)


@given(arguments=json_objects, as_string=st.booleans())
def test_arguments_object_or_its_json_text_parse_to_the_same_dict(arguments, as_string: bool):
    wire = json.dumps(arguments) if as_string else arguments
    record = {
        "message": {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": wire}}]}
    }
    [event] = ChatStreamParser().feed_record(record)
    assert isinstance(event, ToolCallsReceived)
    assert event.calls[0].arguments == arguments
    assert event.calls[0].arguments_error is None


def test_assistant_message_without_tool_calls_or_thinking_is_minimal():
    assert assistant_message("done") == {"role": "assistant", "content": "done"}


def test_reply_to_message_keeps_ids_and_a_result_points_back_at_its_call():
    reply = AssistantReply()
    tool_call = ToolCall(id="call_9", name="read_file", arguments={"path": "a"})
    reply.add(ToolCallsReceived([tool_call]))
    reply.add(Done("stop"))
    message = reply.to_message()
    assert message == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call_9", "function": {"name": "read_file", "arguments": {"path": "a"}}}
        ],
    }
    assert tool_result_message(tool_call, "text")["tool_call_id"] == "call_9"
    assert reply.done == Done("stop")
