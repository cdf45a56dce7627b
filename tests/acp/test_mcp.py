"""The MCP servers an editor passes in session/new are connected: their tools reach the
model and run (mcp-server-time from PyPI, the test extra, over stdio). One zcoder cannot
take (SSE) is left out and the session opens all the same."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import McpServerStdio, SseMcpServer

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools", [])}


async def test_the_editors_mcp_server_is_connected_and_its_tool_runs(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(
        Turn.tool_calls(call("mcp__clock__get_current_time", {"timezone": "Europe/Lisbon"})),
        Turn.text("It is some time in Lisbon."),
    )
    servers: list[McpServerStdio | SseMcpServer] = [
        McpServerStdio(name="clock", command=TIME_SERVER, args=["--local-timezone", "UTC"], env=[]),
        SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[]),
    ]
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
        opened = await asyncio.wait_for(
            conn.new_session(cwd=str(env.workspace), mcp_servers=list(servers)), WAIT_SECONDS
        )
        done = await asyncio.wait_for(
            conn.prompt(session_id=opened.session_id, prompt=[text_block("time in Lisbon?")]),
            WAIT_SECONDS * 2,
        )

    assert done.stop_reason == "end_turn"
    first, second = fake.chat_bodies
    assert {"mcp__clock__get_current_time", "mcp__clock__convert_time"} <= tool_names(first)
    assert not any(name.startswith("mcp__old__") for name in tool_names(first))
    results = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert '"timezone": "Europe/Lisbon"' in results[-1]
    assert json.loads(results[-1])["timezone"] == "Europe/Lisbon"
    assert client.asked == []  # a read-only tool: not asked


async def test_a_dismissed_consent_saves_nothing_and_the_question_names_the_variables(
    env: Env, fake: FakeOllama
) -> None:
    """Issue 27, item 7. The editor dismisses the consent to a project's server (the
    permission request answered "cancelled"): nothing is saved and the next prompt asks
    again; only a Reject is kept. The question names the variables of the environment the
    entry would be given, never their values."""
    from tests.acp.support import new_session
    from zcoder.mcp.config import load_mcp_config
    from zcoder.mcp.consent import Consent, ConsentBook

    env.vars["SECRET_TOKEN"] = "s3cr3t-value"
    entry = {"command": TIME_SERVER, "env": {"TOKEN": "${SECRET_TOKEN}"}}
    (env.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"clock": entry}}))
    config = load_mcp_config(env.workspace.resolve(), env.home)

    def consent() -> Consent:
        return ConsentBook(env.home).status(env.workspace.resolve(), config.servers["clock"])

    fake.enqueue(Turn.text("one"), Turn.text("two"), Turn.text("three"))
    client = RecordingClient(answer="cancelled")
    async with acp_zcoder(env, fake, client) as (conn, _):
        session = await new_session(conn, env)
        for words, answer in (("first", "cancelled"), ("second", "reject_once")):
            client.answer = answer
            await asyncio.wait_for(
                conn.prompt(session_id=session, prompt=[text_block(words)]), WAIT_SECONDS * 2
            )
            if answer == "cancelled":
                assert consent() is Consent.UNASKED  # nothing saved: asked again
        await asyncio.wait_for(
            conn.prompt(session_id=session, prompt=[text_block("third")]), WAIT_SECONDS * 2
        )

    assert len(client.asked) == 2  # asked at the first two prompts, not after the Reject
    assert consent() is Consent.REFUSED
    text = "\n".join(
        c.content.text for asked in client.asked for c in asked.tool_call.content or []
    )
    assert "variables of your environment, filled in: SECRET_TOKEN (set)" in text
    assert "s3cr3t-value" not in text + json.dumps([a.tool_call.raw_input for a in client.asked])
