"""``zcoder --prompt`` and the model's delegate_task (issue 31 item 4), the real program
with the fake Ollama and a stand-in ``claude`` on PATH: with a terminal the question is
asked there (the exact command line, its own permissions) and y runs it; with ``--yes``,
or with no terminal, nobody is asked and nothing runs, and the model is told why."""

from __future__ import annotations

import os
from pathlib import Path

import pexpect
import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.helper_cli import install_helpers
from tests.test_oneshot import Env, make_env, prompt, spawn_in_pty

pytestmark = pytest.mark.timeout(60)

TASK = "edit:alpha.txt rewrite it"


@pytest.fixture
def env(tmp_path: Path) -> Env:
    made = make_env(tmp_path)
    bin_dir = install_helpers(tmp_path / "bin", ("claude",))
    made.vars["PATH"] = f"{bin_dir}{os.pathsep}{made.vars['PATH']}"
    made.vars["HELPER_LOG"] = str(tmp_path / "helper-runs.jsonl")
    return made


def ran(env: Env) -> bool:
    return Path(env.vars["HELPER_LOG"]).exists()


def delegating(fake: FakeOllama) -> None:
    fake.enqueue(
        Turn.tool_calls(call("delegate_task", {"agent": "claude", "task": TASK}, id="d1")),
        Turn.text("done here"),
    )


@pytest.mark.parametrize("extra", [("--yes",), ()], ids=["yes", "no-terminal"])
def test_where_nobody_can_be_asked_nothing_runs(
    env: Env, fake: FakeOllama, extra: tuple[str, ...]
) -> None:
    delegating(fake)
    done = prompt(env, fake, "have claude code rewrite alpha", *extra)
    assert done.returncode == 0, done.stderr
    assert not ran(env)
    assert (env.workspace / "alpha.txt").read_text() == "alpha\n"
    result = fake.chat_bodies[1]["messages"][-1]
    assert result["tool_call_id"] == "d1"
    assert result["content"].startswith("Error: the user could not be asked")
    assert "Claude Code was not started" in result["content"]
    if extra:
        assert "--yes never starts it" in done.stderr


def test_with_a_terminal_it_is_asked_there_and_y_runs_it(env: Env, fake: FakeOllama) -> None:
    delegating(fake)
    child = spawn_in_pty(env, fake, "go")
    child.expect_exact("[y]es, [n]o: ")  # the question, asked on the terminal
    question = " ".join(str(child.before).split())
    assert f"Hand this task to Claude Code, in {env.workspace}?" in question
    assert "$ claude -p --output-format stream-json" in question
    assert "-- 'edit:alpha.txt rewrite it'" in question
    assert "runs with its own permissions, outside zcoder's guard and approvals" in question
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert ran(env)
    assert (env.workspace / "alpha.txt").read_text() == "changed by claude\n"
    result = fake.chat_bodies[1]["messages"][-1]["content"]
    assert result.startswith(f"claude did: {TASK}")
    assert "[Claude Code exit code 0; 1 file changed: alpha.txt]" in result
