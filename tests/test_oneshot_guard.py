"""``--prompt`` and a command the guard refuses (coding profile), as a prompt-injected model
would send it: ``--yes`` never approves it (refused, even with a terminal to ask on), a
PreToolUse hook's ``allow`` does not either, and without ``--yes`` the terminal is asked
with the guard's reason and no ``a``. The run's $HOME is a private directory with a canary.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.hooks.support import entry, script, write_settings
from tests.test_oneshot import Env, env, prompt

__all__ = ["env"]  # the --prompt tests' fixture

WIPE_HOME = "rm -rf ~"


def canary(env: Env) -> Path:
    home = Path(env.vars["HOME"])
    assert home.is_relative_to(env.workspace.parent)  # the test's own, never the user's
    (home / "thesis.txt").write_text("four years of work\n")
    return home / "thesis.txt"


def the_wipe(fake: FakeOllama) -> None:
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": WIPE_HOME})), Turn.text("done"))


def tool_result(fake: FakeOllama) -> str:
    message = fake.chat_bodies[1]["messages"][-1]
    assert message["role"] == "tool"
    return str(message["content"])


def test_yes_without_a_terminal_refuses_the_wipe(env: Env, fake: FakeOllama) -> None:
    kept = canary(env)
    the_wipe(fake)
    done = prompt(env, fake, "clean up", "--yes")
    assert done.returncode == 0, done.stderr
    assert kept.read_text() == "four years of work\n"
    assert "--yes never approves it" in done.stderr
    assert "refused by the safety guard" in tool_result(fake)


def test_a_hooks_allow_without_a_terminal_does_not_run_the_wipe(env: Env, fake: FakeOllama) -> None:
    allow = "print(json.dumps({'hookSpecificOutput': {'permissionDecision': 'allow'}}))"
    write_settings(
        env.home / "settings.json",
        {"PreToolUse": entry(script(env.home.parent, "allow", allow), "run_command")},
    )
    kept = canary(env)
    the_wipe(fake)
    done = prompt(env, fake, "clean up")
    assert done.returncode == 0, done.stderr
    assert kept.read_text() == "four years of work\n"
    assert "refused by the safety guard" in tool_result(fake)


def spawn(env: Env, fake: FakeOllama, *flags: str) -> pexpect.spawn:
    host = f"127.0.0.1:{fake.port}"
    args = ["-m", "zcoder", "--prompt", "clean up", "--host", host, "-w", str(env.workspace)]
    return pexpect.spawn(
        sys.executable,
        [*args, *flags],
        env=env.vars,
        cwd=str(env.workspace),
        encoding="utf-8",
        timeout=15,
    )


def test_yes_with_a_terminal_refuses_without_asking(env: Env, fake: FakeOllama) -> None:
    kept = canary(env)
    the_wipe(fake)
    child = spawn(env, fake, "--yes")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "Run it anyway" not in (child.before or "")
    assert kept.read_text() == "four years of work\n"
    assert "refused by the safety guard" in tool_result(fake)


def test_with_a_terminal_it_is_asked_with_the_reason_and_a_is_no(
    env: Env, fake: FakeOllama
) -> None:
    kept = canary(env)
    the_wipe(fake)
    child = spawn(env, fake)
    child.expect_exact("The safety guard refuses this command.")
    child.expect_exact(f"$ {WIPE_HOME}")
    child.expect_exact("refused by the safety guard: recursive rm on '~' would affect a home")
    child.expect_exact("[y]es, [n]o: ")
    child.sendline("a")  # not offered: a no
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert kept.read_text() == "four years of work\n"
    assert "the user was asked and said no" in tool_result(fake)
