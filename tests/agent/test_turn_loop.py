"""The turn loop through the fake Ollama: tool rounds, finish, nudges, loop detection."""

from __future__ import annotations

import json

import pytest

from tests.agent.support import (
    Harness,
    make_harness,
    one_tool_round,
    tool_call_ids,
    tool_result_ids,
)
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import (
    AssistantMessage,
    Notice,
    Outcome,
    ToolFinished,
    ToolStarted,
)
from zcoder.agent.prompts import LOOP_WARNING, NUDGE_BAD_FINISH, NUDGE_EMPTY
from zcoder.tools import CommandPolicy


async def test_tool_round_results_go_back_tied_to_their_call_ids(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.tool_calls(
            call("list_files", {"path": "."}, id="call_a"),
            call("read_file", {"path": "alpha.txt"}, id="call_b"),
        ),
        Turn.text("Two files; alpha.txt says alpha."),
    )
    first, second = await one_tool_round(
        harness, "what is here?", "Two files; alpha.txt says alpha."
    )
    assert {t["function"]["name"] for t in first["tools"]} >= {"list_files", "finish"}
    sent = second["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool"]
    assistant = sent[2]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a", "call_b"]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["list_files", "read_file"]
    assert assistant["tool_calls"][1]["function"]["arguments"] == {"path": "alpha.txt"}
    assert [m["tool_call_id"] for m in sent[3:]] == ["call_a", "call_b"]
    assert [m["tool_name"] for m in sent[3:]] == ["list_files", "read_file"]
    assert "alpha.txt" in sent[3]["content"] and "beta.py" in sent[3]["content"]
    assert "alpha" in sent[4]["content"]
    # The final reply is the last history entry; the events say what ran, in order.
    assert harness.agent.messages[-1] == {
        "role": "assistant",
        "content": "Two files; alpha.txt says alpha.",
    }
    started = [e.name for e in harness.log.of(ToolStarted)]
    done = [(e.name, e.status) for e in harness.log.of(ToolFinished)]
    assert started == ["list_files", "read_file"]
    assert done == [("list_files", "completed"), ("read_file", "completed")]


@pytest.mark.parametrize(
    ("status", "prompt", "response", "outcome"),
    [
        pytest.param("complete", "do it", "All done.", Outcome.COMPLETE, id="complete"),
        pytest.param("blocked", "deploy", "I need the API key.", Outcome.BLOCKED, id="blocked"),
    ],
)
async def test_finish_alone_ends_the_turn_with_its_status_and_response(
    harness: Harness, status: str, prompt: str, response: str, outcome: Outcome
) -> None:
    harness.server.enqueue(
        Turn.tool_calls(call("finish", {"status": status, "response": response}))
    )
    finished = await harness.agent.run_user_turn(prompt)

    assert finished.outcome is outcome
    assert finished.response == response
    shown = harness.log.of(AssistantMessage)
    assert shown == [AssistantMessage(response, partial=False, streamed=False)]
    assert len(harness.bodies()) == 1
    assert tool_call_ids(harness.agent.messages) == tool_result_ids(harness.agent.messages)
    assert [e.role for e in harness.load().events][-1] == "assistant"


async def test_finish_beside_work_calls_is_refused_and_the_turn_goes_on(
    harness: Harness,
) -> None:
    harness.server.enqueue(
        Turn.tool_calls(
            call("write_file", {"path": "out.txt", "content": "made"}, id="w1"),
            call("finish", {"status": "complete", "response": "done"}, id="f1"),
        ),
        Turn.text("Wrote out.txt."),
    )
    finished = await harness.agent.run_user_turn("write it")

    assert finished.outcome is Outcome.COMPLETE
    assert finished.response == "Wrote out.txt."
    assert (harness.workspace / "out.txt").read_text() == "made"
    second = harness.bodies()[1]["messages"]
    results = {m["tool_call_id"]: m["content"] for m in second if m["role"] == "tool"}
    assert not results["w1"].startswith("Error")
    assert results["f1"] == f"Error: {NUDGE_BAD_FINISH}"
    finished_events = {e.call_id: e.status for e in harness.log.of(ToolFinished)}
    assert finished_events == {"w1": "completed", "f1": "failed"}
    statuses = {
        e.metadata["call_id"]: e.metadata["status"]
        for e in harness.load().events
        if e.role == "tool"
    }
    assert statuses == {"w1": "completed", "f1": "failed"}


async def test_empty_replies_get_three_nudges_then_the_turn_is_incomplete(
    harness: Harness,
) -> None:
    harness.server.enqueue(*[Turn.text("") for _ in range(4)])
    finished = await harness.agent.run_user_turn("hello?")

    assert finished.outcome is Outcome.INCOMPLETE
    bodies = harness.bodies()
    assert len(bodies) == 4
    last = bodies[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "user", "user", "user"]
    assert [m["content"] for m in last[2:]] == [NUDGE_EMPTY] * 3
    assert harness.agent.user_ledger == ["hello?"]
    assert [n.text for n in harness.log.of(Notice)] == [NUDGE_EMPTY] * 3
    data = harness.load()
    assert data.user_ledger == ["hello?"]
    assert [e.text for e in data.events if e.metadata.get("context_record")] == [NUDGE_EMPTY] * 3


async def test_a_nudge_that_works_lets_the_turn_complete(harness: Harness) -> None:
    harness.server.enqueue(Turn.text(""), Turn.text("   \n"), Turn.text("Here I am."))
    finished = await harness.agent.run_user_turn("hello?")

    assert finished.outcome is Outcome.COMPLETE
    assert finished.response == "Here I am."
    assert len(harness.bodies()) == 3


async def test_malformed_arguments_come_back_to_the_model_as_an_error(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.tool_calls(call("read_file", '{"path": "alpha.txt"', id="bad")),
        Turn.text("Sorry, fixed."),
    )
    finished = await harness.agent.run_user_turn("read alpha")

    assert finished.outcome is Outcome.COMPLETE
    sent = harness.bodies()[1]["messages"]
    assistant, result = sent[-2], sent[-1]
    # Ollama accepts only an object for arguments, so the history carries {}.
    assert assistant["tool_calls"][0]["function"]["arguments"] == {}
    assert result["tool_call_id"] == "bad"
    assert result["content"].startswith("Error: the arguments of read_file are not valid JSON")
    assert harness.log.of(ToolFinished)[0].status == "failed"


async def test_malformed_rounds_count_as_one_nudge_each_then_incomplete(
    harness: Harness,
) -> None:
    # Several bad calls in one response are one corrective nudge, not several.
    bad = [call("read_file", "not json", id=f"b{i}") for i in range(4)]
    harness.server.enqueue(Turn.tool_calls(*bad), Turn.text("ok"))
    assert (await harness.agent.run_user_turn("x")).outcome is Outcome.COMPLETE

    # Different garbage each time, so that this is not also the same round repeated.
    harness.server.enqueue(*[Turn.tool_calls(call("read_file", f"nope{i}")) for i in range(4)])
    finished = await harness.agent.run_user_turn("y")
    assert finished.outcome is Outcome.INCOMPLETE
    assert "malformed" in finished.error
    assert len(harness.bodies()) == 2 + 4


async def test_a_repeated_round_is_warned_at_three_and_refused_at_four(
    fake, store, workspace, client
) -> None:
    h = make_harness(fake, store, workspace, client, policy=CommandPolicy.ALLOW)
    side_effect = "echo ran >> count.txt; echo same"
    for _ in range(4):
        fake.enqueue(Turn.tool_calls(call("run_command", {"command": side_effect})))
    fake.enqueue(Turn.text("never sent"))

    finished = await h.agent.run_user_turn("loop")

    assert finished.outcome is Outcome.LOOP_STOPPED
    # Three rounds ran; the fourth was refused without running.
    assert (workspace / "count.txt").read_text().splitlines() == ["ran"] * 3
    assert len(fake.chat_bodies) == 4
    fourth = fake.chat_bodies[3]["messages"]
    assert fourth[-1] == {"role": "user", "content": LOOP_WARNING}
    assert LOOP_WARNING not in h.agent.user_ledger
    assert h.agent.messages[-1]["role"] == "tool"
    assert h.agent.messages[-1]["content"].startswith("Refused")
    assert tool_call_ids(h.agent.messages) == tool_result_ids(h.agent.messages)
    assert [e.status for e in h.log.of(ToolFinished)] == ["completed"] * 3 + ["not_executed"]
    assert fake.pending == 1
    # The refused call is in the saved transcript too, so a reload explains the stop.
    events = h.load().events
    refused = [e for e in events if e.role == "tool" and e.metadata.get("refused") == "loop"]
    assert len(refused) == 1 and refused[0].text.startswith("Refused")


async def test_rounds_with_changing_results_are_not_a_loop(fake, store, workspace, client) -> None:
    h = make_harness(fake, store, workspace, client, policy=CommandPolicy.ALLOW)
    for _ in range(5):
        fake.enqueue(Turn.tool_calls(call("run_command", {"command": "echo x >> n; wc -l < n"})))
    fake.enqueue(Turn.text("counted"))

    finished = await h.agent.run_user_turn("count")

    assert finished.outcome is Outcome.COMPLETE
    assert (workspace / "n").read_text().count("x") == 5
    assert not any(m["content"] == LOOP_WARNING for m in h.agent.messages)


async def test_only_the_system_message_is_system_in_every_request(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.text(""),
        Turn.tool_calls(call("list_files", {})),
        Turn.text("first done"),
        Turn.text("second done"),
    )
    await harness.agent.run_user_turn("one")
    await harness.agent.run_user_turn("two")

    bodies = harness.bodies()
    assert len(bodies) == 4
    for body in bodies:
        roles = [m["role"] for m in body["messages"]]
        assert roles[0] == "system"
        assert roles.count("system") == 1
        assert "zcoder" in body["messages"][0]["content"]
        assert str(harness.workspace) in body["messages"][0]["content"]
    assert harness.agent.user_ledger == ["one", "two"]
    assert json.dumps(harness.agent.messages).count(NUDGE_EMPTY) == 1
