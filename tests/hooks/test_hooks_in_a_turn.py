"""Hooks in whole runs of zcoder (``--prompt``, no terminal) with the scripted model: each
event's hook is a real program that the run starts, and every assertion is on what reached
the model, what ran on disk, and how the run ended."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, make_env, prompt

PY = sys.executable


def hook(env: Env, name: str, body: str) -> str:
    """A hook command: a Python script of ``body``; the payload on stdin is ``payload``."""
    path = env.home.parent / f"hook-{name}.py"
    path.write_text("import json, os, sys\npayload = json.load(sys.stdin)\n" + body + "\n")
    return f"{PY} {path}"


def user_hooks(env: Env, hooks: dict[str, object]) -> None:
    env.home.mkdir(parents=True, exist_ok=True)
    (env.home / "settings.json").write_text(json.dumps({"hooks": hooks}))


def entry(command: str, matcher: str = "") -> list[dict[str, object]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


def test_a_pre_tool_use_hook_blocks_a_command_and_the_model_is_told_why(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    blocker = hook(env, "block", "print('no touching today', file=sys.stderr); sys.exit(2)")
    user_hooks(env, {"PreToolUse": entry(blocker, "Bash")})
    with FakeOllama() as fake:
        fake.enqueue(
            Turn.tool_calls(call("run_command", {"command": "touch ran.txt"})),
            Turn.tool_calls(call("finish", {"status": "complete", "response": "Blocked."})),
        )
        done = prompt(env, fake, "touch a file", "--yes")
        answer = fake.chat_bodies[1]["messages"][-1]["content"]
    assert done.returncode == 0, done.stderr
    assert not (env.workspace / "ran.txt").exists()
    assert answer == "Error: a hook blocked this call: no touching today"


def test_allow_runs_a_command_unasked_and_ask_asks_even_with_yes(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    answer = "print(json.dumps({'hookSpecificOutput': {'permissionDecision': os.environ['D']}}))"
    decide = hook(env, "decide", answer)
    user_hooks(env, {"PreToolUse": entry(decide, "run_command")})
    with FakeOllama() as fake:  # no terminal: a command that asks is denied
        fake.enqueue(
            Turn.tool_calls(call("run_command", {"command": "touch allowed.txt"})),
            Turn.tool_calls(call("finish", {"status": "complete", "response": "ok"})),
        )
        env.vars["D"] = "allow"
        done = prompt(env, fake, "touch")
    assert done.returncode == 0, done.stderr
    assert (env.workspace / "allowed.txt").exists()

    with FakeOllama() as fake:
        fake.enqueue(
            Turn.tool_calls(call("run_command", {"command": "touch asked.txt"})),
            Turn.tool_calls(call("finish", {"status": "complete", "response": "ok"})),
        )
        env.vars["D"] = "ask"
        done = prompt(env, fake, "touch", "--yes")
    assert not (env.workspace / "asked.txt").exists()
    assert "no terminal to ask" in done.stderr


def test_a_prompt_hook_can_stop_the_prompt_or_add_context(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    gate = hook(
        env,
        "gate",
        "if 'secret' in payload['prompt']:\n"
        "    print('prompts about secrets are not sent', file=sys.stderr); sys.exit(2)\n"
        "print('The release branch is frozen.')",
    )
    user_hooks(env, {"UserPromptSubmit": entry(gate)})
    with FakeOllama() as fake:
        done = prompt(env, fake, "tell me the secret")
        assert fake.chat_bodies == []  # the model never saw it
    assert done.returncode == 1
    assert "prompts about secrets are not sent" in done.stderr

    with FakeOllama() as fake:
        fake.enqueue(Turn.tool_calls(call("finish", {"status": "complete", "response": "ok"})))
        done = prompt(env, fake, "what now?")
        sent = fake.chat_bodies[0]["messages"]
    assert done.returncode == 0, done.stderr
    assert [m["content"] for m in sent[-2:]] == [
        "what now?",
        "[hook] The release branch is frozen.",
    ]


def test_a_stop_hook_sends_the_model_on_once_then_lets_it_end(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    keep_going = hook(
        env,
        "stop",
        "if not payload['stop_hook_active']:\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'Run the tests first.'}))",
    )
    user_hooks(env, {"Stop": entry(keep_going)})
    with FakeOllama() as fake:
        fake.enqueue(Turn.text("Done."), Turn.text("Tests pass. Done."))
        done = prompt(env, fake, "fix it")
        bodies = fake.chat_bodies
    assert done.returncode == 0, done.stderr
    assert len(bodies) == 2
    assert bodies[1]["messages"][-1]["content"] == "[hook] Run the tests first."
    assert done.stdout.strip().endswith("Tests pass. Done.")


def test_post_tool_use_feedback_reaches_the_model(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    lint = hook(
        env,
        "lint",
        "print(json.dumps({'decision': 'block', 'reason': 'alpha.txt: trailing space'}))",
    )
    user_hooks(env, {"PostToolUse": entry(lint, "Read")})
    with FakeOllama() as fake:
        fake.enqueue(
            Turn.tool_calls(call("read_file", {"path": "alpha.txt"})),
            Turn.tool_calls(call("finish", {"status": "complete", "response": "ok"})),
        )
        done = prompt(env, fake, "read alpha")
        result = fake.chat_bodies[1]["messages"][-1]["content"]
    assert done.returncode == 0, done.stderr
    assert result == "alpha\n\n[hook] alpha.txt: trailing space"


def test_a_project_hook_never_runs_without_consent(tmp_path: Path) -> None:
    """Attack: a cloned repository's .zcoder/settings.json names a hook; nothing of it runs."""
    env = make_env(tmp_path)
    marker = tmp_path / "project-hook-ran"
    planted = hook(env, "planted", f"open({str(marker)!r}, 'w').write('ran')")
    settings = env.workspace / ".zcoder" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": entry(planted)}}))
    with FakeOllama() as fake:
        fake.enqueue(Turn.tool_calls(call("finish", {"status": "complete", "response": "ok"})))
        done = prompt(env, fake, "hello")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "A project hook was not run (you have not agreed to it)" in done.stderr


def test_session_start_context_and_a_broken_settings_file(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    start = hook(env, "start", "print('On call: ann.')")
    user_hooks(env, {"SessionStart": entry(start, "startup"), "Bogus": []})
    with FakeOllama() as fake:
        fake.enqueue(Turn.tool_calls(call("finish", {"status": "complete", "response": "ok"})))
        done = prompt(env, fake, "hello")
        sent = fake.chat_bodies[0]["messages"]
    assert done.returncode == 0, done.stderr
    assert "[hook] On call: ann." in [m["content"] for m in sent]
    assert "hooks.Bogus is not an event zcoder has" in done.stderr
