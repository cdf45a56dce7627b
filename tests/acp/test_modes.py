"""``zcoder --acp`` offers the permission modes as ACP session modes: a session opens in
``--mode``'s, the editor's ``session/set_mode`` switches it, and in plan mode a model
that writes anyway writes nothing; an unknown mode is refused and changes nothing."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError, text_block

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env


async def test_an_editor_lists_the_modes_and_plan_mode_writes_nothing(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(
        Turn.tool_calls(call("write_file", {"path": "alpha.txt", "content": "ALPHA\n"})),
        Turn.text("1. shout alpha"),
    )
    before = (env.workspace / "alpha.txt").read_text()
    async with acp_zcoder(env, fake, RecordingClient("allow_once"), "--mode", "accept-edits") as (
        conn,
        _,
    ):
        await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
        opened = await asyncio.wait_for(conn.new_session(cwd=str(env.workspace)), WAIT_SECONDS)
        assert opened.modes is not None
        assert opened.modes.current_mode_id == "accept-edits"
        ids = [mode.id for mode in opened.modes.available_modes]
        assert ids == ["ask", "accept-edits", "plan"]
        sid = opened.session_id
        with pytest.raises(RequestError):
            await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="yolo"), 5)
        await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="plan"), 5)
        await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("shout alpha")]), WAIT_SECONDS
        )
    assert (env.workspace / "alpha.txt").read_text() == before
    assert "write_file" not in {tool["function"]["name"] for tool in fake.chat_bodies[0]["tools"]}
