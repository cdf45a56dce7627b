"""The model's plan (update_plan) through the fake Ollama: kept, refused when wrong, saved
with the session, put back on resume, and still in front of the model after a compaction."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent.support import Harness, new_agent
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import Outcome, ToolFinished
from zcoder.agent.compaction import SUMMARY_OPEN
from zcoder.agent.events import PlanChanged
from zcoder.tools.plan import MAX_PLAN_ITEM_CHARS, MAX_PLAN_ITEMS, PLAN_RECORD_OPEN, Plan

STEPS = [
    {"text": "read the parser", "status": "done"},
    {"text": "write tests", "status": "in_progress"},
    {"text": "fix the bug", "status": "pending"},
]


def plan_call(items: Any) -> dict[str, Any]:
    return call("update_plan", {"items": items})


async def test_update_plan_keeps_the_plan_saves_it_and_tells_the_front_end(
    harness: Harness,
) -> None:
    harness.server.enqueue(Turn.tool_calls(plan_call(STEPS)), Turn.text("planned"))
    finished = await harness.agent.run_user_turn("fix the parser")

    assert finished.outcome is Outcome.COMPLETE
    [changed] = harness.log.of(PlanChanged)
    assert changed.plan.to_list() == STEPS
    assert harness.agent.plan.plan == changed.plan
    [result] = harness.log.of(ToolFinished)
    assert result.status == "completed"
    assert result.output == "Plan updated: 1/3 done. In progress: write tests"
    assert harness.load().state == {"plan": {"items": STEPS}}
    # The model is answered compactly, not with the whole list again.
    answer = harness.bodies()[-1]["messages"][-1]
    assert answer["role"] == "tool" and answer["content"] == result.output


@pytest.mark.parametrize(
    ("items", "said"),
    [
        (
            [{"text": "a", "status": "in_progress"}, {"text": "b", "status": "in_progress"}],
            "2 items are in_progress; at most one may be",
        ),
        ([{"text": "a", "status": "started"}], "item 1's status is 'started'; use one of"),
        ([{"text": " ", "status": "pending"}], "item 1 needs a non-empty text"),
        (
            [{"text": "x" * (MAX_PLAN_ITEM_CHARS + 1), "status": "pending"}],
            f"at most {MAX_PLAN_ITEM_CHARS}",
        ),
        (
            [{"text": f"step {n}", "status": "pending"} for n in range(MAX_PLAN_ITEMS + 1)],
            f"a plan has at most {MAX_PLAN_ITEMS} items",
        ),
        (["just a string"], "item 1 must be an object"),
    ],
)
async def test_a_wrong_plan_is_refused_with_why_and_the_plan_kept(
    harness: Harness, items: Any, said: str
) -> None:
    harness.server.enqueue(
        Turn.tool_calls(plan_call(STEPS)),
        Turn.tool_calls(plan_call(items)),
        Turn.text("ok"),
    )
    await harness.agent.run_user_turn("plan it")

    first, refused = harness.log.of(ToolFinished)
    assert first.status == "completed"
    assert refused.status == "failed"
    assert said in refused.output and "The plan was not changed." in refused.output
    assert len(harness.log.of(PlanChanged)) == 1  # only the good one
    assert harness.agent.plan.plan.to_list() == STEPS
    assert harness.load().state == {"plan": {"items": STEPS}}


async def test_other_tools_words_for_a_status_are_taken_and_an_empty_list_clears_it(
    harness: Harness,
) -> None:
    slips = [
        {"text": "one", "status": "completed"},
        {"text": "two", "status": "in progress"},
    ]
    harness.server.enqueue(
        Turn.tool_calls(plan_call(slips)),
        Turn.tool_calls(plan_call([])),
        Turn.text("ok"),
    )
    await harness.agent.run_user_turn("plan it")

    made, cleared = harness.log.of(PlanChanged)
    assert made.plan.to_list() == [
        {"text": "one", "status": "done"},
        {"text": "two", "status": "in_progress"},
    ]
    assert not cleared.plan
    assert harness.load().state == {}  # forgotten, not saved empty


async def test_a_resumed_session_gets_its_plan_back(harness: Harness) -> None:
    harness.server.enqueue(Turn.tool_calls(plan_call(STEPS)), Turn.text("planned"))
    await harness.agent.run_user_turn("fix the parser")

    data = harness.load()
    events: list[Any] = []
    again = new_agent(harness.client, harness.store, harness.workspace, on_event=events.append)
    again.use_session(data.info.id, data.messages, data.user_ledger, data.state)
    assert again.plan.plan.to_list() == STEPS
    assert [e.plan.to_list() for e in events if isinstance(e, PlanChanged)] == [STEPS]
    # Another session without one: the plan shown is cleared.
    other = harness.store.create_session(harness.workspace, "coding", "qwen3-coder")
    again.use_session(other.id, [], [], {})
    assert not again.plan.plan
    assert [bool(e.plan) for e in events if isinstance(e, PlanChanged)] == [True, False]


async def test_after_a_compaction_the_model_still_reads_its_plan(harness: Harness) -> None:
    harness.server.enqueue(Turn.tool_calls(plan_call(STEPS)), Turn.text("planned"))
    await harness.agent.run_user_turn("first request")
    for text in ("second", "third"):
        harness.server.enqueue(Turn.text(f"answer to {text}"))
        await harness.agent.run_user_turn(f"{text} request")
    harness.server.enqueue(Turn.text("Goals: fix the parser."))
    result = await harness.agent.compact()
    assert result.compacted

    summary, record = harness.agent.messages[:2]
    assert summary["content"].startswith(SUMMARY_OPEN)
    assert record["content"] == Plan.from_arguments(STEPS).record()
    assert record["content"].startswith(PLAN_RECORD_OPEN)
    assert "[>] write tests" in record["content"] and "[x] read the parser" in record["content"]
    harness.server.enqueue(Turn.text("going on"))
    await harness.agent.run_user_turn("fourth request")
    sent = harness.bodies()[-1]["messages"]
    assert sent[2]["content"] == record["content"]  # right after the summary
    # Saved so: a resumed session's model reads it too.
    assert harness.load().messages[1] == record
    # A second compaction does not stack plan records: the one kept is the latest plan.
    for text in ("fifth", "sixth"):
        harness.server.enqueue(Turn.text(f"answer to {text}"))
        await harness.agent.run_user_turn(f"{text} request")
    harness.server.enqueue(Turn.text("Goals: still the parser."))
    assert (await harness.agent.compact()).compacted
    records = [m for m in harness.agent.messages if m["content"].startswith(PLAN_RECORD_OPEN)]
    assert records == [record]


def test_the_plan_a_history_last_set_skips_refused_calls_and_reads_the_compaction_record() -> None:
    from zcoder.agent.plan_keeper import plan_in

    def calls(items: object, *, as_text: bool = False) -> dict[str, object]:
        arguments = {"items": items}
        wire = json.dumps(arguments) if as_text else arguments
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "update_plan", "arguments": wire}}],
        }

    one = [{"text": "read", "status": "done"}, {"text": "write", "status": "in_progress"}]
    two_running = [{"text": "a", "status": "in_progress"}, {"text": "b", "status": "in_progress"}]
    record = {"role": "user", "content": Plan.from_arguments(one).record()}
    assert plan_in([{"role": "user", "content": "hello"}]) is None
    assert plan_in([record]) == Plan.from_arguments(one)  # what a compaction left
    # A call the tool refused changed nothing: the one before it stands.
    assert plan_in([calls(one, as_text=True), calls(two_running)]) == Plan.from_arguments(one)
    assert plan_in([calls(one), calls([])]) == Plan()  # an empty list cleared it
