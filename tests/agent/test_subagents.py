"""The task tool: a subagent in a fresh context, its report as the call's result, its
limits, several at once, and Escape (agent/subagent.py, agent/task_tool.py)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from tests.agent.support import Harness, wait_until
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import Outcome
from zcoder.agent.events import SubagentProgress, ToolFinished
from zcoder.agent.subagent import READ_ONLY, REPORT_BYTES, SUBAGENT_PROMPT, subagent_tools
from zcoder.agent.subagent_defs import AgentSet, parse_agent
from zcoder.agent.task_tool import DESCRIPTION, make_task_tool
from zcoder.tools import default_registry
from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.catalog import first_sentence
from zcoder.tools.modes import Effects

READS = Effects.READS


def with_task(harness: Harness, agents: AgentSet | None = None) -> Harness:
    harness.agent.registry.register(make_task_tool(agents or AgentSet()))
    return harness


def task(description: str, prompt: str, **more: Any) -> dict[str, Any]:
    return call("task", {"description": description, "prompt": prompt, **more})


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


async def test_a_subagent_works_in_a_fresh_context_and_its_report_is_the_result(
    harness: Harness,
) -> None:
    with_task(harness)
    harness.server.enqueue(
        Turn.tool_calls(task("read alpha", "Read alpha.txt and say what it holds.")),
        Turn.tool_calls(call("read_file", {"path": "alpha.txt"})),  # the subagent's
        Turn.text("alpha.txt holds the word alpha."),  # its report
        Turn.text("The subagent says: alpha."),  # the parent again
    )

    finished = await harness.agent.run_user_turn("what is in alpha.txt? use a subagent")

    assert finished.outcome is Outcome.COMPLETE
    _parent, sub_first, sub_second, parent_again = harness.bodies()
    # Fresh: its own system prompt and the job, nothing of the conversation.
    assert [m["role"] for m in sub_first["messages"]] == ["system", "user"]
    system = sub_first["messages"][0]["content"]
    assert system.startswith(SUBAGENT_PROMPT.format(workspace=harness.workspace)[:40])
    assert READ_ONLY in system
    assert sub_first["messages"][1]["content"] == "Read alpha.txt and say what it holds."
    assert "what is in alpha.txt" not in str(sub_first["messages"])
    # Read-only tools only; no nesting, no plan.
    offered = names(sub_first)
    assert "read_file" in offered and "run_command" in offered
    for absent in ("write_file", "replace_text", "apply_patch", "task", "update_plan"):
        assert absent not in offered and absent not in str(sub_first["tools"])
    assert tool_results(sub_second) == ["alpha\n"] or "alpha" in tool_results(sub_second)[0]
    (result,) = tool_results(parent_again)
    assert result.startswith("alpha.txt holds the word alpha.")
    assert "'read alpha': 2 turns, " in result
    progress = harness.log.of(SubagentProgress)
    assert [p.step for p in progress][:2] == ["thinking", "Read alpha.txt"]
    assert progress[-1].turns == 2
    (finished_task,) = [e for e in harness.log.of(ToolFinished) if e.name == "task"]
    assert finished_task.metadata["turns"] == 2
    assert finished_task.metadata["steps"] == "✓ Read alpha.txt"


async def test_the_catalog_line_is_short_and_constant_and_the_agents_cost_nothing_until_loaded(
    harness: Harness, tmp_path: Path
) -> None:
    agents = AgentSet()
    agents.agents["reviewer"] = parse_agent(
        "---\nname: reviewer\ndescription: Reviews a diff for bugs\n---\nYou review.\n",
        tmp_path / "reviewer.md",
        "project",
    )
    with_task(harness, agents)
    assert len(first_sentence(DESCRIPTION)) < 45
    harness.server.enqueue(Turn.text("hi"), Turn.tool_calls(call("load_tools", {"name": "task"})))
    harness.server.enqueue(Turn.text("loaded"))
    await harness.agent.run_user_turn("hello")
    await harness.agent.run_user_turn("load the task tool")
    first, _load, after = harness.bodies()
    load_tools = next(t for t in first["tools"] if t["function"]["name"] == "load_tools")
    catalog = load_tools["function"]["description"]
    assert "- task: Hand a self-contained job to a subagent" in catalog
    assert "reviewer" not in str(first["tools"])  # listed only once the tool is loaded
    task_schema = next(t for t in after["tools"] if t["function"]["name"] == "task")
    assert "- reviewer: Reviews a diff for bugs" in task_schema["function"]["description"]


async def test_a_subagent_out_of_turns_returns_what_it_had_with_a_note(harness: Harness) -> None:
    with_task(harness)
    harness.server.enqueue(Turn.tool_calls(task("list", "List everything.")))
    for index in range(12):  # the turn limit: each request lists another folder
        harness.server.enqueue(
            Turn.tool_calls(call("list_files", {"path": "."}), content=f"Still looking {index}.")
            if index % 2
            else Turn.tool_calls(call("search", {"query": f"x{index}"}))
        )
    harness.server.enqueue(Turn.text("ok"))

    await harness.agent.run_user_turn("go")

    bodies = harness.bodies()
    assert len(bodies) == 1 + 12 + 1  # the subagent made no 13th request
    (result,) = tool_results(bodies[-1])
    assert result.startswith("Still looking 11.")
    assert "stopped before it finished (the limit of 12 turns is reached)" in result


async def test_a_subagent_out_of_tokens_stops_and_its_report_is_bounded(harness: Harness) -> None:
    with_task(harness)
    harness.server.enqueue(
        Turn.tool_calls(task("big", "Read.")),
        Turn.tool_calls(
            call("read_file", {"path": "alpha.txt"}),
            content="x" * (REPORT_BYTES * 2),
            prompt_eval_count=31_000,
        ),
        Turn.text("ok"),
    )

    await harness.agent.run_user_turn("go")

    bodies = harness.bodies()
    assert len(bodies) == 3  # one request of the subagent spent its budget
    (result,) = tool_results(bodies[-1])
    assert "the token budget is spent" in result
    assert len(result.encode()) <= REPORT_BYTES + 64
    assert "bytes omitted" in result


async def two_jobs(harness: Harness, slots: int) -> list[str]:
    """Two task calls in one response, with ``slots`` subagents at once; their results."""
    with_task(harness)
    harness.agent.settings.subagents = slots
    harness.server.enqueue(
        Turn.tool_calls(task("one", "Job one."), task("two", "Job two.")),
        Turn.text("report A"),
        Turn.text("report B"),
        Turn.text("both done"),
    )
    finished = await harness.agent.run_user_turn("two jobs")
    assert finished.outcome is Outcome.COMPLETE
    return tool_results(harness.bodies()[-1])


async def test_two_subagents_run_at_once_where_the_server_has_two_slots(harness: Harness) -> None:
    results = await two_jobs(harness, 2)

    events = harness.log.events
    first_end = next(i for i, e in enumerate(events) if isinstance(e, ToolFinished))
    thinking = {e.call_id for e in events[:first_end] if isinstance(e, SubagentProgress)}
    assert len(thinking) == 2  # both began before either ended
    assert sorted(r.split("\n")[0] for r in results) == ["report A", "report B"]
    # Answered in the order of the calls.
    assert "'one'" in results[0] and "'two'" in results[1]


async def test_with_one_slot_the_second_subagent_waits_for_the_first(harness: Harness) -> None:
    results = await two_jobs(harness, 1)

    assert results[0].startswith("report A") and "'one'" in results[0]
    assert results[1].startswith("report B") and "'two'" in results[1]
    waits = [e for e in harness.log.of(SubagentProgress) if e.step == "waiting for a free slot"]
    assert len(waits) == 1


async def test_escape_stops_the_subagents_and_the_parent_turn(harness: Harness) -> None:
    with_task(harness)
    harness.agent.settings.subagents = 2
    harness.server.enqueue(
        Turn.tool_calls(task("one", "Job one."), task("two", "Job two.")),
        Turn.stall(),
        Turn.stall(),
    )
    turn = asyncio.create_task(harness.agent.run_user_turn("two jobs"))
    await wait_until(lambda: len(harness.server.chat_bodies) == 3, what="both subagents asking")

    turn.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await turn

    history = harness.agent.messages
    answers = [m["content"] for m in history if m["role"] == "tool"]
    assert len(answers) == 2 and all(a.startswith("Interrupted") for a in answers)
    assert len(harness.server.chat_bodies) == 3  # nothing asked after the stop


def test_a_subagent_gets_no_mcp_tool_relay_tool_plan_or_task(tmp_path: Path) -> None:
    async def never(_args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        raise AssertionError("not run")

    parent = default_registry()
    parent.register(make_task_tool(AgentSet()))
    parent.register(ToolSpec("mcp__srv__read", "Reads.", arguments({}), never, effects=READS))
    parent.register(
        ToolSpec(
            "list_agents",
            "Lists.",
            arguments({}),
            never,
            lambda _o, _c: True,
            Offered.WHILE_ON,
            READS,
        )
    )
    everything = parse_agent(
        "---\nname: all\ndescription: d\ntools: mcp__srv__read, list_agents, task, "
        "update_plan, write_file\n---\nx\n",
        tmp_path / "all.md",
        "project",
    )

    for definition, writes in ((None, False), (everything, True)):
        names = subagent_tools(parent, definition, writes=writes).names()
        for absent in ("mcp__srv__read", "list_agents", "task", "update_plan"):
            assert absent not in names
    assert subagent_tools(parent, everything, writes=True).names() == ["write_file", "finish"]
    assert "write_file" not in subagent_tools(parent, everything, writes=False).names()
