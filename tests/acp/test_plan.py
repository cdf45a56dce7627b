"""The model's plan under ``zcoder --acp``: sent as the protocol's own plan update, which
editors draw as their checklist, at each change and when a saved session is loaded. The
SDK's client side drives the real program; the fake Ollama calls update_plan."""

from __future__ import annotations

import asyncio

from acp import text_block

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder, new_session
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env

STEPS = [
    {"text": "read alpha", "status": "done"},
    {"text": "write the summary", "status": "in_progress"},
    {"text": "check it", "status": "pending"},
]
AS_ACP = [
    ("read alpha", "completed", "medium"),
    ("write the summary", "in_progress", "medium"),
    ("check it", "pending", "medium"),
]


def entries(update) -> list[tuple[str, str, str]]:
    return [(e.content, e.status, e.priority) for e in update.entries]


async def test_each_plan_the_model_makes_is_a_plan_update_and_a_load_sends_it_again(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(
        Turn.tool_calls(call("update_plan", {"items": STEPS[:1]}, id="p1")),
        Turn.tool_calls(call("update_plan", {"items": STEPS}, id="p2")),
        Turn.text("Planned."),
    )
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        done = await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("summarise alpha")]),
            WAIT_SECONDS,
        )
        assert done.stop_reason == "end_turn"
        # The editor shows the session again while it is open here: its plan comes too.
        await asyncio.wait_for(
            conn.load_session(cwd=str(env.workspace), session_id=session_id), WAIT_SECONDS
        )

    first, second, shown_again = client.of_kind("plan")
    assert entries(shown_again) == AS_ACP
    assert entries(first) == AS_ACP[:1]
    assert entries(second) == AS_ACP
    calls = [u for u in client.of_kind("tool_call") if u.tool_call_id in ("p1", "p2")]
    assert [u.kind for u in calls] == ["think"] * 4  # live, then replayed by the load

    again = RecordingClient()
    async with acp_zcoder(env, fake, again) as (conn, _):
        await conn.initialize(protocol_version=1)
        await asyncio.wait_for(
            conn.load_session(cwd=str(env.workspace), session_id=session_id), WAIT_SECONDS
        )
        # Before the load's response: the editor shows the plan with the conversation.
        (loaded,) = again.of_kind("plan")
    assert entries(loaded) == AS_ACP
