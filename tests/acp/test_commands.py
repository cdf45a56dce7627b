"""zcoder's commands in an editor: those the one registry declares for editors, offered
as ACP's available commands with their usage and help, and carried out when a prompt
starts with one."""

from __future__ import annotations

import asyncio

from acp import text_block
from acp.client.connection import ClientSideConnection
from acp.schema import AvailableCommandsUpdate

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder, new_session
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.test_oneshot import Env, sessions
from zcoder.acp.commands import available_commands, editor_commands, find_command


async def ask(conn: ClientSideConnection, session_id: str, text: str) -> str:
    done = await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]), WAIT_SECONDS
    )
    return str(done.stop_reason)


def test_the_commands_are_the_registrys_own() -> None:
    from zcoder.slash.registry import FrontEnd, commands

    registry = commands()
    offered = available_commands()
    assert [c.name for c in editor_commands()] == [f"/{c.name}" for c in offered]
    for entry in offered:
        declared = registry.find(f"/{entry.name}")
        assert declared is not None and declared.applies_to(FrontEnd.EDITOR), entry.name
        usage = " ".join([declared.name, entry.input.root.hint] if entry.input else [declared.name])
        assert (usage, entry.description) in [(f.usage, f.help) for f in declared.forms]
    # The TUI's aliases and its own commands are not an editor's: they go to the model.
    assert find_command("/? x") is None and find_command("/model x") is None
    assert find_command("/COMPACT the answer") == (registry.find("/compact"), "the answer")


async def test_the_editor_is_offered_the_commands_and_they_make_no_model_request(
    env: Env, fake: FakeOllama
) -> None:
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        await client.wait_for(lambda: bool(client.of_kind("available_commands_update")))
        (offered,) = client.of_kind("available_commands_update")
        assert await ask(conn, session_id, "/help") == "end_turn"
        assert await ask(conn, session_id, "/context") == "end_turn"
        assert await ask(conn, session_id, "/diff") == "end_turn"
        assert await ask(conn, session_id, "/list-agents") == "end_turn"

    assert isinstance(offered, AvailableCommandsUpdate)
    names = [c.name for c in offered.available_commands]
    assert names == [
            "help", "context", "compact", "diff", "list-agents", "instructions", "init", "tasks",
        ]  # fmt: skip
    compact = offered.available_commands[2]
    assert compact.input is not None and compact.input.root.hint == "[FOCUS]"
    reply = client.reply()
    assert "/compact [FOCUS]" in reply  # /help
    assert "Context of the next request, in tokens" in reply  # /context
    assert "No file changes in this session" in reply  # /diff
    assert fake.chat_bodies == []
    assert [data.user_ledger for data in sessions(env)] in ([], [[]])


async def test_compact_is_a_turn_and_another_slash_word_goes_to_the_model(
    env: Env, fake: FakeOllama
) -> None:
    questions = ["what is the answer?", "and the question?", "why?"]
    fake.enqueue(
        *(Turn.text(f"Answer {n}.") for n in range(len(questions))),
        Turn.text("Summary: we talked about the answer."),
        Turn.text("That is a path."),
    )
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        for question in questions:
            assert await ask(conn, session_id, question) == "end_turn"
        assert await ask(conn, session_id, "/compact the answer") == "end_turn"
        assert len(fake.chat_bodies) == len(questions) + 1  # the summary was asked for
        assert "the answer" in str(fake.chat_bodies[-1]["messages"])
        assert await ask(conn, session_id, "/etc/hosts is what?") == "end_turn"

    assert "That is a path." in client.reply()
    (data,) = sessions(env)
    assert data.user_ledger == [*questions, "/etc/hosts is what?"]


async def test_a_compaction_the_model_fails_changes_nothing_and_says_so(
    env: Env, fake: FakeOllama
) -> None:
    questions = ["one?", "two?", "three?"]
    fake.enqueue(
        *(Turn.text(f"Answer {n}.") for n in range(len(questions))),
        Turn.http_error(500, "the model broke"),
    )
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        for question in questions:
            await ask(conn, session_id, question)
        assert await ask(conn, session_id, "/compact") == "end_turn"

    assert "Compaction failed, nothing was changed" in client.reply()
    (data,) = sessions(env)
    assert [m["content"] for m in data.messages if m["role"] == "user"] == questions


async def test_tasks_in_an_editor_reads_and_writes_the_repositorys_board(
    env: Env, fake: FakeOllama
) -> None:
    from zcoder.board import Board

    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        hostile = "fix ```\x1b]52;c;cm0gLXJmIH4=\x07 it"
        assert await ask(conn, session_id, f"/tasks add {hostile}") == "end_turn"
        assert await ask(conn, session_id, "/tasks") == "end_turn"
        assert await ask(conn, session_id, "/tasks done 1") == "end_turn"
        assert await ask(conn, session_id, "/tasks drop 1") == "end_turn"

    reply = client.reply()
    assert "\x1b" not in reply and "\x07" not in reply
    assert "\\e]52;c;cm0gLXJmIH4=" in reply  # shown, escaped
    assert "````\n" in reply  # a fence longer than the title's own backticks
    assert "usage: /tasks, /tasks add TITLE, or /tasks done N" in reply
    assert fake.chat_bodies == []
    # The same board the TUI, `zcoder tasks` and the model's tools use.
    board = Board.for_workspace(env.home, env.workspace)
    try:
        (task,) = board.tasks()
        assert task.state.value == "done" and task.title.startswith("fix ```")
    finally:
        board.close()
