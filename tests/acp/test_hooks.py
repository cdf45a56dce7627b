"""Hooks in an editor's session (``zcoder --acp``): SessionStart before the first prompt of
a new session (``startup``) and of a loaded one (``resume``), and a project hook nobody
allowed, which never runs (there is no person to ask here)."""

from __future__ import annotations

import asyncio
import json

from acp import text_block

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder, new_session
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.hooks.support import entry, marker_script, project_settings, script, write_settings
from tests.test_oneshot import Env


async def ask(conn, session_id: str, text: str):
    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]), WAIT_SECONDS
    )


async def test_session_start_in_new_and_loaded_sessions(env: Env, fake: FakeOllama) -> None:
    log = env.home.parent / "sources.log"
    start = script(
        env.home.parent,
        "start",
        f"open({str(log)!r}, 'a').write(payload['source'] + '\\n'); print('On call: ann.')",
    )
    write_settings(env.home / "settings.json", {"SessionStart": entry(start)})
    fake.enqueue(Turn.text("first"), Turn.text("second"))
    async with acp_zcoder(env, fake, RecordingClient()) as (conn, _):
        session_id = await new_session(conn, env)
        await ask(conn, session_id, "who is on call?")
    async with acp_zcoder(env, fake, RecordingClient()) as (conn, _):
        await conn.initialize(protocol_version=1)
        await asyncio.wait_for(
            conn.load_session(cwd=str(env.workspace), session_id=session_id), WAIT_SECONDS
        )
        await ask(conn, session_id, "and now?")
    assert log.read_text().split() == ["startup", "resume"]
    first = [m["content"] for m in fake.chat_bodies[0]["messages"]]
    assert first[-2:] == ["[hook] On call: ann.", "who is on call?"]


async def test_a_project_hook_nobody_allowed_never_runs(env: Env, fake: FakeOllama) -> None:
    marker = env.home.parent / "planted-ran"
    planted = marker_script(env.home.parent, "planted", marker)
    write_settings(
        project_settings(env.workspace),
        {"SessionStart": entry(planted), "UserPromptSubmit": entry(planted)},
    )
    fake.enqueue(Turn.text("ok"))
    async with acp_zcoder(env, fake, RecordingClient()) as (conn, _):
        session_id = await new_session(conn, env)
        done = await ask(conn, session_id, "hello")
    assert done.stop_reason == "end_turn"
    assert not marker.exists()
    assert "planted" not in json.dumps(fake.chat_bodies)
