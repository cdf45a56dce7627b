"""Subagents under --prompt: each step a line on standard error, the report the call's
result; ZCODER_SUBAGENTS=off takes the task tool away (not even a catalog line)."""

from __future__ import annotations

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, env, prompt

__all__ = ["env"]


def task() -> Turn:
    return Turn.tool_calls(call("task", {"description": "look", "prompt": "Read alpha."}))


def test_a_subagent_s_steps_are_lines_on_stderr(env: Env, fake: FakeOllama) -> None:
    (env.workspace / "alpha.txt").write_text("alpha\n")
    fake.enqueue(
        task(),
        Turn.tool_calls(call("read_file", {"path": "alpha.txt"})),
        Turn.text("It says alpha."),
        Turn.text("Alpha, says the subagent."),
    )

    done = prompt(env, fake, "use a subagent")

    assert done.returncode == 0, done.stderr
    assert "[subagent] Read alpha.txt · turn 1" in done.stderr
    assert "[tool] task: completed — It says alpha." in done.stderr
    assert done.stdout.strip() == "Alpha, says the subagent."


def test_subagents_off_costs_nothing_and_refuses_a_call(env: Env, fake: FakeOllama) -> None:
    env.vars["ZCODER_SUBAGENTS"] = "off"
    fake.enqueue(task(), Turn.text("no subagents here"))

    done = prompt(env, fake, "use a subagent")

    assert done.returncode == 0, done.stderr
    first, second = fake.chat_bodies
    assert "task" not in [tool["function"]["name"] for tool in first["tools"]]
    assert "- task:" not in str(first["tools"])
    (result,) = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert result.startswith("Error: there is no tool named 'task'")
