"""Tool calls and reasoning a local model wrote as text, through the real Agent and the
fake Ollama over HTTP: a recovered call runs and goes back as a real tool round."""

from __future__ import annotations

import json

from tests.agent.support import Harness, one_tool_round
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import AssistantMessage, Outcome, ToolFinished, ToolStarted

FENCED_READ = '```json\n{"name": "read_file", "arguments": {"path": "alpha.txt"}}\n```'


async def test_a_fenced_json_call_runs_and_goes_back_as_a_tool_round(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.text(f"I'll read the file first.\n\n{FENCED_READ}"),
        Turn.text("alpha.txt says alpha."),
    )
    _, second = await one_tool_round(harness, "what does alpha.txt say?", "alpha.txt says alpha.")
    sent = second["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assistant, result = sent[2], sent[3]
    assert assistant["content"] == "I'll read the file first."
    [recovered] = assistant["tool_calls"]
    assert recovered["function"] == {"name": "read_file", "arguments": {"path": "alpha.txt"}}
    # A recovered call's id is made unique in the session (agent/call_ids.py), and the
    # result, the events and the history all carry that one id.
    assert recovered["id"].startswith("recovered_")
    assert result["tool_call_id"] == recovered["id"]
    assert result["tool_name"] == "read_file"
    assert "alpha" in result["content"]
    assert [(e.call_id, e.name) for e in harness.log.of(ToolStarted)] == [
        (recovered["id"], "read_file")
    ]
    assert [e.status for e in harness.log.of(ToolFinished)] == ["completed"]
    # The front end is told the reply's text without the call's JSON.
    shown = [e.text for e in harness.log.of(AssistantMessage)]
    assert shown == ["I'll read the file first.", "alpha.txt says alpha."]
    assert all("read_file" not in text for text in shown)
    saved = [e.text for e in harness.load().events if e.role == "assistant"]
    assert saved == ["I'll read the file first.", "alpha.txt says alpha."]


async def test_a_reply_that_is_only_a_call_clears_what_streamed(harness: Harness) -> None:
    bare = json.dumps({"name": "list_files", "arguments": {"path": "."}})
    harness.server.enqueue(Turn.text(bare), Turn.text("Two files."))
    finished = await harness.agent.run_user_turn("list the files")

    assert finished.outcome is Outcome.COMPLETE
    # An empty streamed message tells the front end that nothing that streamed was a reply.
    assert harness.log.of(AssistantMessage) == [
        AssistantMessage("", streamed=True),
        AssistantMessage("Two files.", partial=False, streamed=True),
    ]
    assistant = harness.bodies()[1]["messages"][2]
    assert assistant["content"] == ""
    assert assistant["tool_calls"][0]["function"]["name"] == "list_files"
    assert [e.text for e in harness.load().events if e.role == "assistant"] == ["Two files."]


async def test_calls_in_several_shapes_run_in_order(harness: Harness) -> None:
    text = (
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "alpha.txt"}}\n</tool_call>\n'
        "<tool_call>\n<function=read_file>\n<parameter=path>\nbeta.py\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    harness.server.enqueue(Turn.text(text), Turn.text("Read both."))
    await harness.agent.run_user_turn("read both")

    sent = harness.bodies()[1]["messages"]
    calls = sent[2]["tool_calls"]
    assert [c["function"]["arguments"]["path"] for c in calls] == ["alpha.txt", "beta.py"]
    ids = [c["id"] for c in calls]
    assert len(set(ids)) == 2
    assert all(i.startswith("recovered_") for i in ids)
    assert [m["tool_call_id"] for m in sent[3:]] == ids
    assert "print('beta')" in sent[4]["content"]


async def test_a_call_to_an_unknown_tool_stays_text(harness: Harness) -> None:
    text = '{"name": "web_search", "arguments": {"query": "zcoder"}}'
    harness.server.enqueue(Turn.text(text))
    finished = await harness.agent.run_user_turn("search the web")

    assert finished.outcome is Outcome.COMPLETE
    assert finished.response == text
    assert harness.log.of(ToolStarted) == []
    assert harness.agent.messages[-1] == {"role": "assistant", "content": text}


async def test_real_tool_calls_are_never_joined_by_recovered_ones(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.tool_calls(call("list_files", {"path": "."}, id="call_a"), content=FENCED_READ),
        Turn.text("Done."),
    )
    await harness.agent.run_user_turn("look")

    assistant = harness.bodies()[1]["messages"][2]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a"]
    assert assistant["content"] == FENCED_READ


async def test_reasoning_in_think_tags_is_not_sent_back_as_content(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.text("<think>\nThe user greets me; I should greet back.\n</think>\n\nHello!"),
        Turn.text("Fine, thanks."),
    )
    first = await harness.agent.run_user_turn("hi")
    second = await harness.agent.run_user_turn("how are you?")

    assert first.response == "Hello!"
    assert second.response == "Fine, thanks."
    sent = harness.bodies()[1]["messages"]
    assert sent[2] == {"role": "assistant", "content": "Hello!"}
    assert "I should greet back" not in json.dumps(sent)
    # What the user sees and what the session keeps is the answer alone.
    assert harness.log.of(AssistantMessage)[0] == AssistantMessage("Hello!")
    assert next(e.text for e in harness.load().events if e.role == "assistant") == "Hello!"


async def test_reasoning_then_a_call_keeps_the_reasoning_as_thinking(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.text(f"<think>\nI need the file.\n</think>\n\n{FENCED_READ}"),
        Turn.text("It says alpha."),
    )
    await harness.agent.run_user_turn("read alpha")

    assistant = harness.bodies()[1]["messages"][2]
    assert assistant["content"] == ""
    assert assistant["thinking"] == "I need the file."
    assert assistant["tool_calls"][0]["id"].startswith("recovered_")
    assert harness.log.of(AssistantMessage)[0] == AssistantMessage("", streamed=True)
