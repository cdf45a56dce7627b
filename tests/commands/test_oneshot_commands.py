"""Custom commands and skills in ``zcoder --prompt``: the expanded prompt reaches the model."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.test_oneshot import make_env, prompt, sessions
from zcoder.skills.active import active_skills

BODY = "Check the changelog before tagging."


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run_command_file(
    tmp_path: Path, name: str, text: str, typed: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``zcoder --prompt typed`` in a workspace whose command file ``name``.md holds ``text``:
    the run, which must succeed, and the one request the model was sent."""
    env = make_env(tmp_path)
    write(env.workspace / ".zcoder" / "commands" / f"{name}.md", text)
    with FakeOllama() as fake:
        fake.enqueue(Turn.text("ok"))
        done = prompt(env, fake, typed)
        [body] = fake.chat_bodies
    assert done.returncode == 0, done.stderr
    return done, body


def test_a_custom_command_runs_with_its_arguments(tmp_path: Path) -> None:
    done, body = run_command_file(tmp_path, "fix", "Fix issue $1 in $2.", "/fix 12 parser.py")
    assert body["messages"][-1]["content"] == "Fix issue 12 in parser.py."
    assert "/fix 12 parser.py → the prompt of the custom command /fix" in done.stderr


def test_a_built_in_name_is_refused_and_sent_as_typed(tmp_path: Path) -> None:
    done, body = run_command_file(tmp_path, "compact", "Not zcoder's compact.", "/compact now")
    assert "/compact is zcoder's own command" in done.stderr
    assert body["messages"][-1]["content"] == "/compact now"


def test_dollar_name_activates_then_sends_the_rest_and_resume_keeps_it(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    write(
        env.workspace / ".agents" / "skills" / "release" / "SKILL.md",
        f"---\nname: release\ndescription: Tag a release.\n---\n{BODY}\n",
    )
    with FakeOllama() as fake:
        done = prompt(env, fake, "$release")  # only the activation: no request
        assert done.returncode == 0, done.stderr
        assert fake.chat_bodies == []
        assert "Skill release is active" in done.stderr
        [session] = sessions(env)
        fake.enqueue(Turn.text("Tagged."))
        done = prompt(env, fake, "/release tag 1.2", "--resume", session.info.id)
        [body] = fake.chat_bodies
    assert done.returncode == 0, done.stderr
    assert "already active" in done.stderr
    assert body["messages"][-1]["content"] == "tag 1.2"
    assert sum(BODY in str(m["content"]) for m in body["messages"]) == 1
    assert active_skills(sessions(env)[0].messages) == ["release"]
