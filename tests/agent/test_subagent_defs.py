"""User-defined subagents (agent/subagent_defs.py): Claude Code's file format, found like
skills, bad files reported and not fatal; the model a definition names; the slots the
server has (agent/task_tool.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import pytest

from tests.agent.support import Harness
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.agent.subagent_defs import discover_agents
from zcoder.agent.task_tool import SubagentParent, Subagents, make_task_tool
from zcoder.model import OpenAIClient
from zcoder.model.turn_queue import TurnQueue

GOOD = """---
name: test-finder
description: Finds the tests of a function
tools: read_file, search
model: {model}
---
You find tests.
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_agents_are_found_in_the_project_and_the_home_the_nearer_winning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    workspace = repo / "pkg"
    workspace.mkdir()
    write(repo / ".claude" / "agents", "finder.md", GOOD.format(model="sonnet"))
    write(workspace / ".zcoder" / "agents", "finder.md", GOOD.format(model="inherit"))
    write(
        tmp_path / "home" / "agents",
        "mine.md",
        GOOD.replace("test-finder", "mine").format(model=""),
    )
    write(
        tmp_path / "user" / ".claude" / "agents",
        "cc.md",
        GOOD.replace("test-finder", "cc").format(model=""),
    )

    found = discover_agents(workspace, tmp_path / "home")

    assert found.names() == ["cc", "mine", "test-finder"]
    finder = found.agents["test-finder"]
    assert finder.source == "project" and finder.model == ""  # inherit: the session's
    assert finder.tools == ("read_file", "search")
    assert finder.prompt == "You find tests."
    assert any("shadowed by the agent in" in problem for problem in found.problems)


BAD = {
    "no-front.md": "You do things.\n",
    "no-name.md": "---\ndescription: x\n---\nbody\n",
    "bad-name.md": "---\nname: Bad Name\ndescription: x\n---\nbody\n",
    "no-description.md": "---\nname: nodesc\n---\nbody\n",
    "no-body.md": "---\nname: nobody\ndescription: x\n---\n",
    "not-yaml.md": "---\nname: [unclosed\n---\nbody\n",
    "python-tag.md": "---\nname: !!python/object/apply:os.system ['touch owned']\n---\nb\n",
}


def test_bad_files_are_reported_with_why_and_the_others_load(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    folder = workspace / ".zcoder" / "agents"
    for name, text in BAD.items():
        write(folder, name, text)
    write(folder, "fine.md", GOOD.replace("test-finder", "fine").format(model=""))
    outside = write(
        tmp_path / "elsewhere", "x.md", GOOD.replace("test-finder", "out").format(model="")
    )
    os.symlink(outside, folder / "link.md")

    found = discover_agents(workspace, None)

    assert found.names() == ["fine"]
    said = "\n".join(found.problems)
    assert len(found.problems) == len(BAD) + 1
    for expected in (
        "does not begin with a '---' line",
        "has no 'name'",
        "is not lowercase letters",
        "has no 'description'",
        "has no prompt after its front matter",
        "is not valid YAML",
        "outside the repository",
    ):
        assert expected in said
    assert not (workspace / "owned").exists() and not Path("owned").exists()


async def test_a_definition_s_model_is_used_when_served_else_the_session_s_and_said(
    harness: Harness,
) -> None:
    folder = harness.workspace / ".zcoder" / "agents"
    write(folder, "a.md", GOOD.replace("test-finder", "local").format(model="llama3.2:latest"))
    write(folder, "b.md", GOOD.replace("test-finder", "cloud").format(model="sonnet"))
    harness.agent.registry.register(make_task_tool(discover_agents(harness.workspace, None)))
    harness.server.enqueue(
        Turn.tool_calls(
            call("task", {"description": "a", "prompt": "A.", "subagent_type": "local"}),
            call("task", {"description": "b", "prompt": "B.", "subagent_type": "cloud"}),
        ),
        Turn.text("report A"),
        Turn.text("report B"),
        Turn.text("done"),
    )

    await harness.agent.run_user_turn("go")

    bodies = harness.bodies()
    assert [body["model"] for body in bodies] == [
        "qwen3-coder",
        "llama3.2:latest",
        "qwen3-coder",
        "qwen3-coder",
    ]
    results = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert results[1].startswith(
        "[model 'sonnet' is not served here: the subagent used qwen3-coder]"
    )
    assert "You find tests." in bodies[1]["messages"][0]["content"]


async def test_subagents_run_at_once_as_many_as_llama_server_has_slots(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, harness: Harness
) -> None:
    openai_fake.total_slots = 3
    assert await openai_client.parallel_slots() == 3
    harness.agent.client = openai_client
    assert await Subagents(cast(SubagentParent, harness.agent)).slots() == 3
    harness.agent.client = harness.client  # Ollama does not say: one at a time
    assert await Subagents(cast(SubagentParent, harness.agent)).slots() == 1
    harness.agent.settings.subagents = 2  # ZCODER_SUBAGENTS wins
    assert await Subagents(cast(SubagentParent, harness.agent)).slots() == 2


async def test_the_machines_turn_queue_lets_as_many_requests_through_as_subagents_run(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, harness: Harness, tmp_path: Path
) -> None:
    """A local server's turn queue has one place unless told more (zcoder.model.turn_queue):
    subagents that may run three at once would otherwise reach the server one by one."""
    openai_fake.total_slots = 3
    harness.agent.client = openai_client
    queue = TurnQueue(tmp_path / "home", places=1)
    harness.agent.settings.turn_queue = queue
    assert await Subagents(cast(SubagentParent, harness.agent)).slots() == 3
    assert queue.places == 3
    harness.agent.settings.subagents = 2  # never fewer places than it had
    assert await Subagents(cast(SubagentParent, harness.agent)).slots() == 2
    assert queue.places == 3
