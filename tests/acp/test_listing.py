"""ACP's ``session/list``: the SDK's client asks the real ``zcoder --acp`` for the saved
sessions of its workspace (what an editor's history and ``/sessions`` over ``--connect``
show), and pages through a long list."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder, new_session
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.test_oneshot import Env
from zcoder.acp.listing import PAGE, list_page, saved_session
from zcoder.config import load_config
from zcoder.frontend.resume import session_lines
from zcoder.sessions import SessionStore


async def test_the_saved_sessions_are_listed_newest_first_with_what_zcoder_shows(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(Turn.text("one"), Turn.text("two"), Turn.text("three"))
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        first = await new_session(conn, env)
        for text in ("fix the parser", "and its tests"):
            await asyncio.wait_for(
                conn.prompt(session_id=first, prompt=[text_block(text)]), WAIT_SECONDS
            )
        opened = await asyncio.wait_for(conn.new_session(cwd=str(env.workspace)), WAIT_SECONDS)
        second = opened.session_id
        await asyncio.wait_for(
            conn.prompt(session_id=second, prompt=[text_block("write the docs")]), WAIT_SECONDS
        )
        answer = await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
        listed = await asyncio.wait_for(conn.list_sessions(cwd=str(env.workspace)), WAIT_SECONDS)
        without_cwd = await asyncio.wait_for(conn.list_sessions(), WAIT_SECONDS)

    capabilities = answer.agent_capabilities
    assert capabilities is not None and capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.list is not None
    assert [s.session_id for s in listed.sessions] == [second, first]
    assert [s.title for s in listed.sessions] == ["write the docs", "fix the parser"]
    assert all(s.cwd == str(env.workspace.resolve()) for s in listed.sessions)
    assert listed.next_cursor is None
    # The process's own directory is the workspace when the client names none.
    assert [s.session_id for s in without_cwd.sessions] == [second, first]
    # What a zcoder client makes of them (remote/parts.py: /sessions over --connect).
    records = [saved_session(s) for s in listed.sessions]
    assert [count for _, count in records] == [2, 4]
    (line, _) = session_lines([info for info, _ in records], current=second)
    assert line.startswith(f"● {second}") and line.endswith("write the docs")


async def test_a_cursor_it_did_not_give_is_an_error_and_it_serves_on(
    env: Env, fake: FakeOllama
) -> None:
    async with acp_zcoder(env, fake, RecordingClient()) as (conn, _):
        await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
        with pytest.raises(RequestError, match="Invalid params"):
            await asyncio.wait_for(conn.list_sessions(cursor="../etc"), WAIT_SECONDS)
        with pytest.raises(RequestError, match="Invalid params"):
            await asyncio.wait_for(conn.list_sessions(cwd="relative/path"), WAIT_SECONDS)
        assert await new_session(conn, env)


def test_a_long_list_comes_in_pages(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = load_config({"ZCODER_HOME": str(tmp_path / "home")}, workspace=str(workspace))
    with SessionStore(tmp_path / "home") as store:
        made = [
            store.create_session(workspace, config.profile.value, "m").id for _ in range(PAGE + 5)
        ]
        first = list_page(store, config, None)
        rest = list_page(store, config, first.next_cursor)
    assert len(first.sessions) == PAGE and first.next_cursor == str(PAGE)
    assert len(rest.sessions) == 5 and rest.next_cursor is None
    assert sorted(s.session_id for s in first.sessions + rest.sessions) == sorted(made)
