"""``zcoder --acp`` through a whole session, driven by the SDK's own client side: the real
program in a subprocess, the fake Ollama over HTTP, a private ZCODER_HOME."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator

import pytest
from acp import text_block
from acp.schema import ToolCallProgress, ToolCallStart

from tests.acp.support import (
    WAIT_SECONDS,
    RecordingClient,
    Running,
    acp_zcoder,
    command_running,
    new_session,
    stderr_of,
)
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, sessions
from zcoder.sessions.locks import acquire as acquire_session_lock


async def prompt(conn, session_id: str, text: str):
    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]), WAIT_SECONDS
    )


async def test_initialize_says_what_zcoder_supports(env: Env, fake: FakeOllama) -> None:
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        answer = await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)

    assert answer.protocol_version == 1
    capabilities = answer.agent_capabilities
    assert capabilities is not None and capabilities.load_session is True
    assert capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.image is False
    assert capabilities.prompt_capabilities.audio is False
    assert capabilities.mcp_capabilities is not None
    assert capabilities.mcp_capabilities.http is True  # and stdio, as every agent
    assert capabilities.mcp_capabilities.sse is False
    assert answer.agent_info is not None and answer.agent_info.name == "zcoder"


async def test_a_prompt_streams_its_reply_and_the_session_is_saved(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(Turn.thinking("Let me greet.", "Hello there, dear friend."))
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, process):
        session_id = await new_session(conn, env)
        done = await prompt(conn, session_id, "say hello")
        assert done.stop_reason == "end_turn"
        assert done.field_meta == {"zcoder": {"outcome": "complete"}}
    assert await process.wait() == 0, stderr_of(env)

    assert client.reply() == "Hello there, dear friend."
    assert len(client.of_kind("agent_message_chunk")) > 1, "the reply did not stream"
    thought = "".join(u.content.text for u in client.of_kind("agent_thought_chunk"))
    assert thought == "Let me greet."
    (data,) = sessions(env)
    assert data.info.id == session_id
    assert data.user_ledger == ["say hello"]
    assert [m["content"] for m in data.messages] == ["say hello", "Hello there, dear friend."]
    window = fake.chat_bodies[0]["options"]["num_ctx"]  # sized before the first request
    meter = client.of_kind("usage_update")
    assert meter and all(u.size == window for u in meter)
    assert 0 < meter[-1].used < window


async def test_session_new_refuses_a_relative_or_missing_cwd(env: Env, fake: FakeOllama) -> None:
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        await conn.initialize(protocol_version=1)
        for cwd in ("relative/dir", str(env.workspace / "missing")):
            with pytest.raises(Exception, match="Invalid params") as raised:
                await asyncio.wait_for(conn.new_session(cwd=cwd), WAIT_SECONDS)
            assert getattr(raised.value, "code", None) == -32602
    # initialize asks whether the model takes images (/api/show); nothing else is asked.
    assert [request.path for request in fake.requests] == ["/api/show"]


@pytest.mark.parametrize(
    ("answer", "runs"),
    [("allow_once", True), ("reject_once", False), ("cancelled", False)],
)
async def test_a_command_runs_only_with_permission(
    env: Env, fake: FakeOllama, answer: str, runs: bool
) -> None:
    command = "touch ran.txt; echo made it"
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": command}, id="c1")),
        Turn.text("All done."),
    )
    client = RecordingClient(answer)
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        done = await prompt(conn, session_id, "make a file")

    assert done.stop_reason == "end_turn"
    assert (env.workspace / "ran.txt").exists() is runs
    (asked,) = client.asked
    assert asked.tool_call.tool_call_id == "c1"
    assert asked.tool_call.kind == "execute"
    shown = asked.tool_call.content[0].content.text  # type: ignore[index]
    assert f"$ {command}" in shown and str(env.workspace) in shown
    assert [o.option_id for o in asked.options] == ["allow_once", "allow_always", "reject_once"]
    (start,) = [u for u in client.updates if isinstance(u, ToolCallStart)]
    assert (start.kind, start.title, start.status) == ("execute", command, "pending")
    result = fake.chat_bodies[1]["messages"][-1]["content"]
    if runs:
        assert client.tool_states("c1")[-1] == "completed"
        assert "made it" in client.tool_text("c1")
        assert result == "made it\n[exit code 0]"
    else:
        assert client.tool_states("c1")[-1] == "failed"
        assert "denied" in result
    assert client.reply() == "All done."


async def test_allow_always_stops_asking_for_the_rest_of_the_session(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch one.txt"}, id="c1")),
        Turn.tool_calls(call("run_command", {"command": "touch two.txt"}, id="c2")),
        Turn.text("Both made."),
    )
    client = RecordingClient("allow_always")
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        await prompt(conn, session_id, "make two files")

    assert (env.workspace / "one.txt").exists() and (env.workspace / "two.txt").exists()
    assert [a.tool_call.tool_call_id for a in client.asked] == ["c1"]


async def test_an_edit_under_zcoder_edits_ask_is_asked_with_its_diff(
    env: Env, fake: FakeOllama
) -> None:
    env.vars["ZCODER_EDITS"] = "ask"
    fake.enqueue(
        Turn.tool_calls(
            call(
                "replace_text",
                {"path": "alpha.txt", "old_text": "alpha", "new_text": "omega"},
                id="e1",
            )
        ),
        Turn.text("Changed."),
    )
    client = RecordingClient("allow_once")
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        await prompt(conn, session_id, "change alpha")

    assert (env.workspace / "alpha.txt").read_text() == "omega\n"
    (asked,) = client.asked
    (diff,) = asked.tool_call.content or []
    assert diff.type == "diff"
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(env.workspace / "alpha.txt"),
        "alpha\n",
        "omega\n",
    )
    assert [o.option_id for o in asked.options] == ["allow_once", "allow_always", "reject_once"]
    finished = [u for u in client.updates if isinstance(u, ToolCallProgress) and u.content]
    assert any(c.type == "diff" for c in finished[-1].content or [])
    assert client.tool_states("e1")[-1] == "completed"


@contextlib.asynccontextmanager
async def a_minute_long_command(env: Env, fake: FakeOllama) -> AsyncIterator[Running]:
    """The model runs a command that writes its shell's pid, prints "started", sleeps a
    minute and would then touch late.txt; yields once "started" has arrived, the turn
    still running."""
    command = "echo $$ > shell.pid; echo started; sleep 60; touch late.txt"
    async with command_running(env, fake, command, "wait a minute", "started") as running:
        yield running


async def test_cancel_stops_the_running_command_and_the_prompt_says_cancelled(
    env: Env, fake: FakeOllama
) -> None:
    async with a_minute_long_command(env, fake) as running:
        await running.conn.cancel(session_id=running.session_id)
        done = await asyncio.wait_for(running.turn, WAIT_SECONDS)
        assert done.stop_reason == "cancelled"
        shell = int((env.workspace / "shell.pid").read_text())
        await wait_until_gone(shell)
    assert await running.process.wait() == 0, stderr_of(env)

    assert not (env.workspace / "late.txt").exists()
    assert running.client.tool_states("c1")[-1] == "failed"
    (data,) = sessions(env)
    assert data.user_ledger == ["wait a minute"]
    (tool,) = [e for e in data.events if e.role == "tool"]
    assert tool.metadata["status"] == "interrupted"


async def test_sigterm_mid_command_stops_it_saves_and_exits(env: Env, fake: FakeOllama) -> None:
    async with a_minute_long_command(env, fake) as running:
        running.process.send_signal(signal.SIGTERM)
        exited = await asyncio.wait_for(running.process.wait(), WAIT_SECONDS)
        assert exited == 128 + signal.SIGTERM
        shell = int((env.workspace / "shell.pid").read_text())
        await wait_until_gone(shell)
        running.turn.cancel()

    assert not (env.workspace / "late.txt").exists()
    (data,) = sessions(env)
    assert data.info.id == running.session_id
    (tool,) = [e for e in data.events if e.role == "tool"]
    assert tool.metadata["status"] == "interrupted"
    assert "started" in tool.text


async def wait_until_gone(pid: int) -> None:
    async def gone() -> None:
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            await asyncio.sleep(0.05)

    await asyncio.wait_for(gone(), WAIT_SECONDS)


async def test_load_replays_a_saved_session_and_continues_it(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(
        Turn.tool_calls(call("list_files", {"path": "."}, id="l1")),
        Turn.text("first answer"),
        Turn.text("second answer"),
    )
    first = RecordingClient()
    async with acp_zcoder(env, fake, first) as (conn, _):
        session_id = await new_session(conn, env)
        await prompt(conn, session_id, "first question")

    again = RecordingClient()
    async with acp_zcoder(env, fake, again) as (conn, _):
        await conn.initialize(protocol_version=1)
        await asyncio.wait_for(
            conn.load_session(cwd=str(env.workspace), session_id=session_id), WAIT_SECONDS
        )
        # The conversation (zcoder's commands are offered after it, not part of it).
        replayed = [u for u in again.updates if u.session_update != "available_commands_update"]
        done = await prompt(conn, session_id, "second question")

    kinds = [u.session_update for u in replayed]
    assert kinds == ["user_message_chunk", "tool_call", "agent_message_chunk"]
    assert replayed[0].content.text == "first question"
    tool = replayed[1]
    assert (tool.tool_call_id, tool.kind, tool.status) == ("l1", "read", "completed")
    assert "alpha.txt" in tool.content[0].content.text
    assert replayed[2].content.text == "first answer"
    assert done.stop_reason == "end_turn"
    sent = [m.get("content") for m in fake.chat_bodies[-1]["messages"][1:]]
    assert sent[0] == "first question" and sent[-2:] == ["first answer", "second question"]
    (data,) = sessions(env)
    assert data.user_ledger == ["first question", "second question"]


async def test_load_of_an_unknown_session_is_an_error(env: Env, fake: FakeOllama) -> None:
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        await conn.initialize(protocol_version=1)
        with pytest.raises(Exception, match="Resource not found"):
            await asyncio.wait_for(
                conn.load_session(cwd=str(env.workspace), session_id="nope"), WAIT_SECONDS
            )
        # ...and the server serves on.
        assert await new_session(conn, env)


async def test_a_second_prompt_while_one_runs_is_refused(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.stall(before="Thinking about it"))
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        first = asyncio.ensure_future(
            conn.prompt(session_id=session_id, prompt=[text_block("first")])
        )
        await client.wait_for(lambda: "Thinking about it" in client.reply())
        with pytest.raises(Exception, match="Invalid request") as raised:
            await prompt(conn, session_id, "second")
        assert "already running" in str(getattr(raised.value, "data", ""))
        await conn.cancel(session_id=session_id)
        assert (await asyncio.wait_for(first, WAIT_SECONDS)).stop_reason == "cancelled"

    assert fake.wait_for_disconnect(WAIT_SECONDS)
    (data,) = sessions(env)
    assert data.user_ledger == ["first"]


async def test_a_session_open_in_another_zcoder_is_not_loaded(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.text("saved answer"))
    first = RecordingClient()
    async with acp_zcoder(env, fake, first) as (conn, _):
        session_id = await new_session(conn, env)
        await prompt(conn, session_id, "remember this")

    with acquire_session_lock(env.home, session_id):  # as a running TUI holds it
        client = RecordingClient()
        async with acp_zcoder(env, fake, client) as (conn, _):
            await conn.initialize(protocol_version=1)
            with pytest.raises(Exception, match="Invalid request") as raised:
                await asyncio.wait_for(
                    conn.load_session(cwd=str(env.workspace), session_id=session_id),
                    WAIT_SECONDS,
                )
            assert "open in another zcoder" in str(getattr(raised.value, "data", ""))
    assert client.updates == []
