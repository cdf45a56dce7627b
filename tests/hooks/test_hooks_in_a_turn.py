"""Hooks in whole runs of zcoder (``--prompt``, no terminal) with the scripted model: each
event's hook is a real program that the run starts, and every assertion is on what reached
the model, what ran on disk, and how the run ended."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.hooks.support import entry, marker_script, project_settings, script, write_settings
from tests.test_oneshot import Env, env, prompt

__all__ = ["env"]  # the --prompt tests' fixture: a private home and workspace


def install(env: Env, event: str, body: str, matcher: str = "") -> str:
    """The user's hook for ``event``: a Python script of ``body`` (``payload`` is stdin's
    JSON), in ``$ZCODER_HOME/settings.json``."""
    command = script(env.home.parent, event, body)
    write_settings(env.home / "settings.json", {event: entry(command, matcher)})
    return command


def finish(response: str = "ok") -> Turn:
    return Turn.tool_calls(call("finish", {"status": "complete", "response": response}))


def run(
    env: Env, text: str, *turns: Turn, flags: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """``zcoder --prompt text`` against a fake model that answers ``turns``; what the run
    did and every request the model got."""
    with FakeOllama() as fake:
        fake.enqueue(*turns)
        done = prompt(env, fake, text, *flags)
        return done, fake.chat_bodies


def test_a_pre_tool_use_hook_blocks_a_command_and_the_model_is_told_why(env: Env) -> None:
    install(env, "PreToolUse", "print('no touching today', file=sys.stderr); sys.exit(2)", "Bash")
    touch = Turn.tool_calls(call("run_command", {"command": "touch ran.txt"}))
    done, bodies = run(env, "touch a file", touch, finish("Blocked."), flags=("--yes",))
    assert done.returncode == 0, done.stderr
    assert not (env.workspace / "ran.txt").exists()
    answer = bodies[1]["messages"][-1]["content"]
    assert answer == "Error: a hook blocked this call: no touching today"


def test_allow_runs_a_command_unasked_and_ask_asks_even_with_yes(env: Env) -> None:
    answer = "print(json.dumps({'hookSpecificOutput': {'permissionDecision': os.environ['D']}}))"
    install(env, "PreToolUse", answer, "run_command")
    # No terminal: a command that asks is denied.
    env.vars["D"] = "allow"
    touch = Turn.tool_calls(call("run_command", {"command": "touch allowed.txt"}))
    done, _ = run(env, "touch", touch, finish())
    assert done.returncode == 0, done.stderr
    assert (env.workspace / "allowed.txt").exists()

    env.vars["D"] = "ask"
    touch = Turn.tool_calls(call("run_command", {"command": "touch asked.txt"}))
    done, _ = run(env, "touch", touch, finish(), flags=("--yes",))
    assert not (env.workspace / "asked.txt").exists()
    assert "no terminal to ask" in done.stderr


def test_a_prompt_hook_can_stop_the_prompt_or_add_context(env: Env) -> None:
    install(
        env,
        "UserPromptSubmit",
        "if 'secret' in payload['prompt']:\n"
        "    print('prompts about secrets are not sent', file=sys.stderr); sys.exit(2)\n"
        "print('The release branch is frozen.')",
    )
    done, bodies = run(env, "tell me the secret")
    assert bodies == []  # the model never saw it
    assert done.returncode == 1
    assert "prompts about secrets are not sent" in done.stderr

    done, bodies = run(env, "what now?", finish())
    assert done.returncode == 0, done.stderr
    assert [m["content"] for m in bodies[0]["messages"][-2:]] == [
        "what now?",
        "[hook] The release branch is frozen.",
    ]


def test_a_stop_hook_sends_the_model_on_once_then_lets_it_end(env: Env) -> None:
    install(
        env,
        "Stop",
        "if not payload['stop_hook_active']:\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'Run the tests first.'}))",
    )
    done, bodies = run(env, "fix it", Turn.text("Done."), Turn.text("Tests pass. Done."))
    assert done.returncode == 0, done.stderr
    assert len(bodies) == 2
    assert bodies[1]["messages"][-1]["content"] == "[hook] Run the tests first."
    assert done.stdout.strip().endswith("Tests pass. Done.")


def test_post_tool_use_feedback_reaches_the_model(env: Env) -> None:
    lint = "print(json.dumps({'decision': 'block', 'reason': 'alpha.txt: trailing space'}))"
    install(env, "PostToolUse", lint, "Read")
    read = Turn.tool_calls(call("read_file", {"path": "alpha.txt"}))
    done, bodies = run(env, "read alpha", read, finish())
    assert done.returncode == 0, done.stderr
    assert bodies[1]["messages"][-1]["content"] == "alpha\n\n[hook] alpha.txt: trailing space"


def test_a_project_hook_never_runs_without_consent(env: Env, tmp_path: Path) -> None:
    """Attack: a cloned repository's .zcoder/settings.json names a hook; nothing of it runs,
    and the run says how the user would allow it."""
    marker = tmp_path / "project-hook-ran"
    planted = marker_script(tmp_path, "planted", marker)
    write_settings(project_settings(env.workspace), {"UserPromptSubmit": entry(planted)})
    done, _ = run(env, "hello", finish())
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "A project hook was not run (you have not agreed to it)" in done.stderr
    assert "zcoder hooks trust" in done.stderr


def test_session_start_context_and_a_broken_settings_file(env: Env) -> None:
    install(env, "SessionStart", "print('On call: ann.')", "startup")
    settings = env.home / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["Bogus"] = []
    settings.write_text(json.dumps(data))
    done, bodies = run(env, "hello", finish())
    assert done.returncode == 0, done.stderr
    assert "[hook] On call: ann." in [m["content"] for m in bodies[0]["messages"]]
    assert "hooks.Bogus is not an event zcoder has" in done.stderr
