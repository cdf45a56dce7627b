"""Agent Skills in a whole run of zcoder: the catalog in the system prompt, the model
activating a skill and reading one of its files, and nothing of it where there are none."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, make_env, prompt


def test_a_skill_is_listed_activated_and_read(tmp_path: Path) -> None:
    env: Env = make_env(tmp_path)
    folder = env.workspace / ".agents" / "skills" / "release-notes"
    (folder / "templates").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes. Use when asked for "
        "a changelog.\n---\nFill templates/notes.md with the changes.\n"
    )
    (folder / "templates" / "notes.md").write_text("## Changes\n- ...\n")
    with FakeOllama() as fake:
        fake.enqueue(
            Turn.tool_calls(call("activate_skill", {"name": "release-notes"})),
            Turn.tool_calls(
                call("read_skill_file", {"skill": "release-notes", "path": "templates/notes.md"})
            ),
            Turn.tool_calls(call("finish", {"status": "complete", "response": "Done."})),
        )
        done = prompt(env, fake, "write the changelog")
        bodies = fake.chat_bodies

    assert done.returncode == 0, done.stderr
    system = bodies[0]["messages"][0]["content"]
    assert "- release-notes: Write release notes. Use when asked for a changelog." in system
    assert {"activate_skill", "read_skill_file"} <= {
        t["function"]["name"] for t in bodies[0]["tools"]
    }
    activated = bodies[1]["messages"][-1]["content"]
    assert "Fill templates/notes.md with the changes." in activated
    assert "templates/notes.md" in activated
    assert bodies[2]["messages"][-1]["content"] == "## Changes\n- ...\n"
    # The system prompt is the same in every request of the session (the prompt cache).
    assert len({b["messages"][0]["content"] for b in bodies}) == 1


def test_without_skills_there_is_no_catalog_and_no_skill_tool(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    with FakeOllama() as fake:
        fake.enqueue(Turn.tool_calls(call("finish", {"status": "complete", "response": "Hi."})))
        done = prompt(env, fake, "hello")
        [body] = fake.chat_bodies
    assert done.returncode == 0, done.stderr
    assert "Skills" not in body["messages"][0]["content"]
    assert not {"activate_skill", "read_skill_file"} & {
        t["function"]["name"] for t in body["tools"]
    }
