"""--prompt mode and edits: journalled for a later /undo; ZCODER_EDITS=ask needs a terminal."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, make_env, prompt, sessions, spawn_in_pty
from zcoder.agent.edits import EditJournal
from zcoder.config import ConfigError, load_config
from zcoder.tools import EditPolicy


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def shout_alpha(server: FakeOllama, content: str, reply: str) -> None:
    """The model's answer to "shout alpha": write ``content`` to alpha.txt, then ``reply``."""
    server.enqueue(
        Turn.tool_calls(call("write_file", {"path": "alpha.txt", "content": content})),
        Turn.text(reply),
    )


def test_an_edit_in_prompt_mode_can_be_undone_from_the_saved_session(env: Env) -> None:
    with FakeOllama() as server:
        shout_alpha(server, "ALPHA\n", "done")
        done = prompt(env, server, "shout alpha")
    assert done.returncode == 0, done.stderr
    assert (env.workspace / "alpha.txt").read_text() == "ALPHA\n"
    (data,) = sessions(env)
    journal = EditJournal(env.workspace, home=env.home)
    journal.use_session(data.info.id)
    plan = journal.plan_undo()
    assert plan is not None and plan.label == "shout alpha"
    journal.undo(plan)
    assert (env.workspace / "alpha.txt").read_text() == "alpha\n"


def test_ask_mode_without_a_terminal_writes_nothing_and_tells_the_model(env: Env) -> None:
    env.vars["ZCODER_EDITS"] = "ask"
    with FakeOllama() as server:
        shout_alpha(server, "ALPHA\n", "could not")
        done = prompt(env, server, "shout alpha")
        told = server.chat_bodies[1]["messages"][-1]["content"]
    assert done.returncode == 0, done.stderr
    assert (env.workspace / "alpha.txt").read_text() == "alpha\n"
    assert "no terminal to ask about an edit; nothing was written" in done.stderr
    assert told.startswith("Error: the edit could not be approved")


@pytest.mark.parametrize(
    ("raw", "policy"),
    [
        (None, EditPolicy.AUTO),
        ("", EditPolicy.AUTO),
        ("auto", EditPolicy.AUTO),
        (" ASK ", EditPolicy.ASK),
    ],
)
def test_zcoder_edits_setting(tmp_path: Path, raw: str | None, policy: EditPolicy) -> None:
    env = {} if raw is None else {"ZCODER_EDITS": raw}
    config = load_config({**env, "ZCODER_HOME": str(tmp_path)}, workspace=str(tmp_path))
    assert config.edit_policy is policy


def test_a_bad_zcoder_edits_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ZCODER_EDITS must be auto or ask"):
        load_config({"ZCODER_EDITS": "sometimes"}, workspace=str(tmp_path))


@pytest.mark.parametrize(
    ("raw", "policy"),
    [
        (None, EditPolicy.ASK),
        ("", EditPolicy.ASK),
        (" AUTO ", EditPolicy.AUTO),
        ("ask", EditPolicy.ASK),
    ],
)
def test_zcoder_relay_edits_setting(tmp_path: Path, raw: str | None, policy: EditPolicy) -> None:
    env = {} if raw is None else {"ZCODER_RELAY_EDITS": raw}
    config = load_config({**env, "ZCODER_HOME": str(tmp_path)}, workspace=str(tmp_path))
    assert config.relay_edit_policy is policy
    assert config.edit_policy is EditPolicy.AUTO  # the user's own turns are not changed


def test_a_bad_zcoder_relay_edits_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ZCODER_RELAY_EDITS must be auto or ask"):
        load_config({"ZCODER_RELAY_EDITS": "trusted"}, workspace=str(tmp_path))


@pytest.mark.parametrize(("key", "written"), [("y", True), ("n", False)])
def test_with_a_terminal_the_edit_is_shown_and_asked(env: Env, key: str, written: bool) -> None:
    env.vars["ZCODER_EDITS"] = "ask"
    with FakeOllama() as server:
        shout_alpha(server, "ALPHA\x1b[2J\n", "over")
        child = spawn_in_pty(env, server, "shout alpha")
        child.expect_exact("write_file wants to change alpha.txt:")
        child.expect_exact("-alpha")
        child.expect_exact("+ALPHA\\e[2J")  # the escape shown, never sent to the terminal
        child.expect_exact("[y]es, [a]ll edits of this turn, [n]o: ")
        child.sendline(key)
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    expected = "ALPHA\x1b[2J\n" if written else "alpha\n"
    assert (env.workspace / "alpha.txt").read_text() == expected


def test_prompt_mode_honours_mode_plan_under_yes_and_writes_nothing(env: Env) -> None:
    with FakeOllama() as server:
        server.enqueue(
            Turn.tool_calls(
                call("write_file", {"path": "alpha.txt", "content": "ALPHA\n"}),
                call("run_command", {"command": "echo ALPHA > alpha.txt"}),
            ),
            Turn.text("1. shout alpha"),
        )
        done = prompt(env, server, "shout alpha", "--mode", "plan", "--yes")
        first, second = server.chat_bodies
    assert done.returncode == 0, done.stderr
    assert (env.workspace / "alpha.txt").read_text() == "alpha\n"
    assert "write_file" not in {tool["function"]["name"] for tool in first["tools"]}
    results = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert all("plan mode" in result for result in results), results
    assert "1. shout alpha" in done.stdout
