"""Requests a model server's prompt cache can reuse (issue 20, item 2).

llama.cpp and Ollama keep the previous request's tokens and read only what is new, but only
while the beginning of the request is the same. So, within a session, each request must
begin with the whole of the previous request (its system message, tools and messages) and
the reply the model gave to it; what changes goes at the end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.support import Harness, make_agent
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.agent import Agent
from zcoder.model import OpenAIClient
from zcoder.sessions import SessionStore


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"function": {"name": name, "arguments": arguments}}


def _prefix_problems(bodies: list[dict[str, Any]]) -> list[str]:
    """Where a request does not begin with its predecessor (and that one's reply)."""
    problems = []
    for n in range(1, len(bodies)):
        before, after = bodies[n - 1], bodies[n]
        if json.dumps(before.get("tools")) != json.dumps(after.get("tools")):
            problems.append(f"request {n}: the tools changed")
        old, new = before["messages"], after["messages"]
        for i, message in enumerate(old):
            if i >= len(new) or json.dumps(new[i], sort_keys=True) != json.dumps(
                message, sort_keys=True
            ):
                shown = json.dumps(new[i])[:300] if i < len(new) else "nothing"
                problems.append(
                    f"request {n}: message {i} ({message.get('role')}) changed: "
                    f"{json.dumps(message)[:300]} -> {shown}"
                )
                break
    return problems


async def _two_questions(agent: Agent, server: FakeOllama | FakeOpenAI) -> list[dict[str, Any]]:
    """Two turns, with tool rounds and reasoning; every request ``server`` was sent."""
    server.enqueue(
        Turn.tool_calls(_call("list_files", path="."), thinking="Let me look around."),
        Turn.tool_calls(_call("read_file", path="alpha.txt")),
        Turn.text("alpha.txt holds one word.", thinking="It says alpha."),
        Turn.tool_calls(_call("read_file", path="beta.py"), thinking="Now beta."),
        Turn.text("beta.py prints beta."),
    )
    await agent.run_user_turn("What is in alpha.txt?")
    await agent.run_user_turn("And beta.py?")
    return list(server.chat_bodies)


async def test_each_request_begins_with_the_previous_one(harness: Harness) -> None:
    bodies = await _two_questions(harness.agent, harness.server)
    assert len(bodies) == 5
    assert _prefix_problems(bodies) == []


async def test_openai_each_request_begins_with_the_previous_one(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, store: SessionStore, workspace: Path
) -> None:
    agent, _log, _sid = make_agent(openai_client, store, workspace)
    bodies = await _two_questions(agent, openai_fake)
    assert len(bodies) == 5
    assert _prefix_problems(bodies) == []


async def test_agents_arriving_and_leaving_are_told_at_the_end_not_in_the_system_prompt(
    harness: Harness,
) -> None:
    fake = harness.server
    fake.enqueue(Turn.text("one"), Turn.text("two"), Turn.text("three"), Turn.text("four"))
    agent = harness.agent
    await agent.run_user_turn("first")
    agent.workspace_peers = "beta (pid 42, this workspace)"
    await agent.run_user_turn("second")
    await agent.run_user_turn("third")  # nothing changed: nothing more is said
    agent.workspace_peers = ""
    await agent.run_user_turn("fourth")
    bodies = harness.bodies()
    assert _prefix_problems(bodies) == []
    assert len({json.dumps(b["messages"][0]) for b in bodies}) == 1
    told = [
        m["content"]
        for m in bodies[-1]["messages"]
        if m["role"] == "user" and m["content"].startswith("[zcoder]")
    ]
    assert len(told) == 2
    assert "Other zcoder agents work in this workspace or around it now: beta" in told[0]
    assert "read a file again before changing it" in told[0]
    assert told[1] == "[zcoder] No other zcoder agent works in this workspace or around it now."
    second = bodies[1]["messages"]
    assert [m["role"] for m in second[-2:]] == ["user", "user"]
    assert second[-1]["content"] == "second"


async def test_a_note_lost_to_another_session_is_told_again(harness: Harness) -> None:
    fake = harness.server
    fake.enqueue(Turn.text("one"), Turn.text("two"))
    agent = harness.agent
    agent.workspace_peers = "beta (pid 42, this workspace)"
    await agent.run_user_turn("first")
    agent.use_session(harness.session_id, [], [])  # as /new or a resumed session does
    await agent.run_user_turn("again")
    last = harness.bodies()[-1]["messages"]
    assert sum("beta (pid 42" in str(m.get("content")) for m in last) == 1
