"""--prompt "/goal OBJECTIVE": the goal's turns and its check without the UI, the exit
code saying whether the check accepted it, the goal saved for /goal resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, make_env, prompt, sessions
from zcoder.agent.goal_check import CHECK_PROMPT

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def finish(response: str) -> Turn:
    return Turn.tool_calls(call("finish", {"status": "complete", "response": response}))


def test_a_goal_runs_until_the_check_accepts_it(env: Env) -> None:
    with FakeOllama() as server:
        server.enqueue(
            finish("nothing to do"),
            Turn.tool_calls(call("verdict", {"verdict": "reject", "reasons": "alpha is lower"})),
            Turn.tool_calls(call("write_file", {"path": "alpha.txt", "content": "ALPHA\n"})),
            finish("alpha shouted"),
            Turn.tool_calls(call("verdict", {"verdict": "accept", "reasons": "ALPHA is there"})),
        )
        done = prompt(env, server, "/goal shout alpha --tokens 90k")
        checks = [b for b in server.chat_bodies if b["messages"][0]["content"] == CHECK_PROMPT]
    assert done.returncode == 0, done.stderr
    assert "✗ The check sent the goal back: alpha is lower" in done.stderr
    assert "✓ Goal done: the check accepted it: ALPHA is there" in done.stderr
    assert (env.workspace / "alpha.txt").read_text() == "ALPHA\n"
    assert len(checks) == 2
    (data,) = sessions(env)
    assert data.state["goal"]["state"] == "done" and data.state["goal"]["budget"] == 90_000


def test_a_paused_goal_exits_1_and_resume_goes_on_with_a_larger_budget(env: Env) -> None:
    with FakeOllama() as server:
        server.enqueue(Turn.text("thinking about it", prompt_eval_count=4000, eval_count=100))
        paused = prompt(env, server, "/goal shout alpha --tokens 4k")
        (data,) = sessions(env)
        server.enqueue(
            finish("done"),
            Turn.tool_calls(call("verdict", {"verdict": "accept", "reasons": "fine"})),
        )
        refused = prompt(env, server, "/goal resume", "--resume", data.info.id)
        resumed = prompt(env, server, "/goal resume --tokens 20k", "--resume", data.info.id)
    assert paused.returncode == 1
    assert "zcoder: the goal paused: its token budget is spent (4k/4k)" in paused.stderr
    assert refused.returncode == 1 and "/goal resume --tokens N" in refused.stderr
    assert resumed.returncode == 0, resumed.stderr
    assert "Goal done" in resumed.stderr


def test_a_bad_goal_is_a_usage_error_and_asks_the_model_nothing(env: Env) -> None:
    with FakeOllama() as server:
        done = prompt(env, server, "/goal fix it --tokens lots")
        asked = [b for b in server.chat_bodies if len(b["messages"]) > 1]
    assert done.returncode == 2
    assert "--tokens takes a positive count of tokens" in done.stderr
    assert asked == []


def test_a_goal_in_plan_mode_is_refused_and_asks_the_model_nothing(env: Env) -> None:
    """Plan mode changes nothing, so a goal there could only be sent back until its turns
    ran out: it is refused, saying how to switch."""
    with FakeOllama() as server:
        done = prompt(env, server, "/goal shout alpha", "--mode", "plan")
        asked = [b for b in server.chat_bodies if len(b["messages"]) > 1]
    assert done.returncode == 1, done.stderr
    assert "plan mode changes nothing: switch the mode first" in done.stderr
    assert asked == []
