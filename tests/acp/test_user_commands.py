"""The workspace's custom commands and skills in an editor: offered as ACP available
commands after session/new and session/load (with their description and argument hint),
carried out as ``--prompt`` carries them out when a prompt names one, and zcoder's own
commands first."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp.schema import AvailableCommand, AvailableCommandsUpdate

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder, new_session
from tests.acp.test_commands import ask
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.test_oneshot import Env, sessions
from zcoder.skills.active import active_skills

REVIEW = (
    "---\ndescription: Review a pull request.\nargument-hint: [pr-number]\n---\nReview PR #$1.\n"
)
SKILL = "---\nname: release\ndescription: Tag a release.\n---\nCheck the changelog first.\n"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def offered(client: RecordingClient) -> dict[str, AvailableCommand]:
    (update,) = client.of_kind("available_commands_update")
    assert isinstance(update, AvailableCommandsUpdate)
    return {c.name: c for c in update.available_commands}


def last_user(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user"))


OWN_NAMES = frozenset(
    {
        "?",
        "agents",
        "claude",
        "clear",
        "codex",
        "compact",
        "context",
        "copy",
        "diff",
        "exit",
        "fork",
        "goal",
        "help",
        "helpers",
        "inbox",
        "jobs",
        "init",
        "instructions",
        "list-agents",
        "mode",
        "mcp",
        "model",
        "new",
        "opencode",
        "output",
        "q",
        "queue",
        "quit",
        "rename",
        "rewind",
        "sessions",
        "skill",
        "skills",
        "spawn",
        "team",
        "tasks",
        "undo",
    }
)
"""zcoder's own command names and aliases, without the slash: none may be a custom
command's or a skill's, in an editor as in the TUI and --prompt."""


def test_zcoders_own_names_are_the_registrys() -> None:
    from zcoder.slash.registry import commands

    assert commands().builtin_names() == OWN_NAMES


async def test_a_custom_command_is_offered_and_runs_with_its_arguments(
    env: Env, fake: FakeOllama
) -> None:
    write(env.workspace / ".zcoder" / "commands" / "review.md", REVIEW)
    fake.enqueue(Turn.text("Reviewed."))
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        await client.wait_for(lambda: bool(client.of_kind("available_commands_update")))
        commands = offered(client)
        assert await ask(conn, session_id, "/review 42") == "end_turn"

    assert list(commands)[:5] == ["help", "context", "compact", "diff", "list-agents"]
    review = commands["review"]
    assert review.description == "Review a pull request. (project)"
    assert review.input is not None and review.input.root.hint == "[pr-number]"
    [body] = fake.chat_bodies
    assert last_user(body) == "Review PR #42."
    assert "/review 42 → the prompt of the custom command /review" in client.reply()
    assert "Reviewed." in client.reply()


async def test_skills_by_slash_name_dollar_name_and_slash_skill_and_offered_on_load(
    env: Env, fake: FakeOllama
) -> None:
    write(env.workspace / ".agents" / "skills" / "release" / "SKILL.md", SKILL)
    fake.enqueue(Turn.text("Tagged."), Turn.text("Again."))
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        assert await ask(conn, session_id, "$release") == "end_turn"  # activated, no request
        assert fake.chat_bodies == []
        assert await ask(conn, session_id, "/release tag 1.2") == "end_turn"
        assert await ask(conn, session_id, "/skill release and 1.3") == "end_turn"
    loaded = RecordingClient()
    async with acp_zcoder(env, fake, loaded) as (conn, _):
        await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
        await asyncio.wait_for(
            conn.load_session(cwd=str(env.workspace), session_id=session_id), WAIT_SECONDS
        )
        await loaded.wait_for(lambda: bool(loaded.of_kind("available_commands_update")))

    commands = offered(loaded)
    assert commands["release"].description == "activate the skill, then send TEXT: Tag a release."
    assert commands["skill"].input is not None
    assert commands["skill"].input.root.hint == "NAME [TEXT]"
    first, second = fake.chat_bodies
    assert last_user(first) == "tag 1.2"
    assert last_user(second) == "and 1.3"
    assert "Check the changelog first." in str(first["messages"])
    assert "already active" in client.reply()
    assert active_skills(sessions(env)[0].messages) == ["release"]


async def test_zcoders_own_command_wins_over_a_custom_one_of_its_name(
    env: Env, fake: FakeOllama
) -> None:
    write(env.workspace / ".zcoder" / "commands" / "diff.md", "Not zcoder's diff.")
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        await client.wait_for(lambda: bool(client.of_kind("available_commands_update")))
        assert await ask(conn, session_id, "/diff") == "end_turn"

    (update,) = client.of_kind("available_commands_update")
    assert [c.name for c in update.available_commands].count("diff") == 1
    assert offered(client)["diff"].description.startswith("show every file the agent changed")
    assert "No file changes in this session" in client.reply()
    assert fake.chat_bodies == []
