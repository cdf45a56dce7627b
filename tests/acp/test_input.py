"""``_zcoder/input``: an editor reaches a running turn of ``zcoder --acp`` (steer, queue,
list, drop, resume), driven by the SDK's client side against the real program and the
fake Ollama. The turn's tool call is a command held open by a gate file, so what is sent
"during the tool call" is sent then, whatever the machine's load."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import PromptResponse, UserMessageChunk

from tests.acp import support
from tests.acp.support import (
    WAIT_SECONDS,
    RecordingClient,
    acp_zcoder,
    command_running,
    new_session,
)
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.hooks.support import entry, script, write_settings
from tests.test_oneshot import Env, sessions
from zcoder.acp.input import MAX_INPUT_CHARS

GATED = (
    "echo waiting; for i in $(seq 1 2000); do [ -e go ] && break; sleep 0.05; done; echo through"
)
"""A command that says it started, then waits (at most 100 s) until the test opens the gate."""


async def ask(conn: ClientSideConnection, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(conn.ext_method(method, params), WAIT_SECONDS)


async def send(running: support.Running, action: str, **params: Any) -> Any:
    return await ask(
        running.conn, "zcoder/input", {"sessionId": running.session_id, "action": action, **params}
    )


@contextlib.asynccontextmanager
async def gated_turn(env: Env, fake: FakeOllama, *after: Turn) -> AsyncIterator[support.Running]:
    """A session whose prompt ("do it") runs GATED (call c1); yields while it waits."""
    async with command_running(env, fake, GATED, "do it", "waiting", *after) as running:
        yield running


async def finish(running: support.Running, env: Env) -> PromptResponse:
    """Open the gate; the prompt's response."""
    (env.workspace / "go").touch()
    return await asyncio.wait_for(running.turn, WAIT_SECONDS)


@contextlib.asynccontextmanager
async def loaded(
    client: RecordingClient, env: Env, fake: FakeOllama, session_id: str
) -> AsyncIterator[ClientSideConnection]:
    """A new ``zcoder --acp`` with the session loaded; ``client`` got its replay."""
    async with acp_zcoder(env, fake, client) as (conn, _):
        await conn.initialize(protocol_version=1)
        await asyncio.wait_for(
            conn.load_session(cwd=str(env.workspace), session_id=session_id), WAIT_SECONDS
        )
        yield conn


async def until_exists(path: Path) -> None:
    async def seen() -> None:
        while not path.exists():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(seen(), WAIT_SECONDS)


def user_chunks(client: RecordingClient) -> list[UserMessageChunk]:
    return [u for u in client.updates if isinstance(u, UserMessageChunk)]


def texts(updates: list[Any]) -> list[str]:
    return [u.content.text for u in updates]


def entry_of(number: int, kind: str, text: str, *, held: bool = False) -> dict[str, Any]:
    return {"number": number, "kind": kind, "text": text, "held": held}


async def test_a_steer_during_a_tool_call_lands_right_after_its_result(
    env: Env, fake: FakeOllama
) -> None:
    async with gated_turn(env, fake, Turn.text("Tabs it is.")) as running:
        answer = await send(running, "steer", text="use tabs, not spaces")
        assert answer == {
            "waiting": [entry_of(1, "steer", "use tabs, not spaces")],
            "added": entry_of(1, "steer", "use tabs, not spaces"),
        }
        (saved,) = sessions(env)
        assert saved.pending == [("steer", "use tabs, not spaces")]  # saved before it lands
        done = await finish(running, env)
        assert done.stop_reason == "end_turn"
        assert await send(running, "list") == {"waiting": []}
        client = running.client

    first, second = fake.chat_bodies
    assert first["messages"][-1]["content"] == "do it"
    *_, result, steered = second["messages"]
    assert result["role"] == "tool" and "through" in result["content"]
    assert steered == {"role": "user", "content": "use tabs, not spaces"}
    (chunk,) = user_chunks(client)
    assert chunk.content.text == "**Steering**\n\nuse tabs, not spaces"
    assert chunk.field_meta == {"zcoder": {"steering": True}}
    # shown where it landed: after the tool's result, before the reply
    at = client.updates.index(chunk)
    assert client.tool_states("c1")[-1] == "completed"
    assert "Tabs it is." not in "".join(
        u.content.text for u in client.updates[:at] if u.session_update == "agent_message_chunk"
    )
    assert client.reply() == "Tabs it is."
    (data,) = sessions(env)
    assert data.user_ledger == ["do it", "use tabs, not spaces"]
    assert data.pending == []
    [event] = [e for e in data.events if e.role == "user" and e.metadata.get("steering")]
    assert event.text == "use tabs, not spaces"

    # Loaded again, the steering shows as it did live.
    again = RecordingClient()
    async with loaded(again, env, fake, running.session_id):
        pass
    replayed = user_chunks(again)
    assert texts(replayed) == ["do it", "**Steering**\n\nuse tabs, not spaces"]
    assert replayed[1].field_meta == {"zcoder": {"steering": True}}


async def test_a_follow_up_runs_after_the_turn_inside_the_same_request(
    env: Env, fake: FakeOllama
) -> None:
    async with gated_turn(env, fake, Turn.text("First done."), Turn.text("Docs done.")) as running:
        answer = await send(running, "queue", text="now the docs")
        assert answer["waiting"] == [entry_of(1, "follow-up", "now the docs")]
        done = await finish(running, env)
        client = running.client

    assert done.stop_reason == "end_turn"
    assert len(fake.chat_bodies) == 3
    assert fake.chat_bodies[1]["messages"][-1]["role"] == "tool"  # not steered in
    assert fake.chat_bodies[2]["messages"][-1] == {"role": "user", "content": "now the docs"}
    (chunk,) = user_chunks(client)
    assert chunk.content.text == "now the docs" and chunk.field_meta is None
    at = client.updates.index(chunk)
    before = "".join(
        u.content.text for u in client.updates[:at] if u.session_update == "agent_message_chunk"
    )
    assert before == "First done." and client.reply() == "First done.Docs done."
    (data,) = sessions(env)
    assert data.user_ledger == ["do it", "now the docs"]


async def test_steering_that_came_after_the_last_safe_point_is_the_next_turn(
    env: Env, fake: FakeOllama
) -> None:
    """The reply had no tool call, so no safe point followed the steer: it runs as a turn
    of its own, right after, in the same request. A Stop hook holds the turn's end open
    (past its last safe point) until the test has steered."""
    stopping, gate = env.home.parent / "stopping", env.home.parent / "stop-gate"
    hook = script(
        env.home.parent,
        "stop",
        f"open({str(stopping)!r}, 'a').write('x')\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.05)",
    )
    write_settings(env.home / "settings.json", {"Stop": entry(hook, timeout=100)})
    fake.enqueue(Turn.text("Plain answer."), Turn.text("Steered answer."))
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session_id, prompt=[text_block("answer plainly")])
        )
        await until_exists(stopping)
        params = {"sessionId": session_id, "action": "steer", "text": "and shorter"}
        await ask(conn, "zcoder/input", params)
        gate.touch()
        done = await asyncio.wait_for(turn, WAIT_SECONDS)

    assert done.stop_reason == "end_turn"
    first, second = fake.chat_bodies
    assert first["messages"][-1]["content"] == "answer plainly"
    assert [m["content"] for m in second["messages"][-2:]] == ["Plain answer.", "and shorter"]
    assert texts(user_chunks(client)) == ["**Steering**\n\nand shorter"]
    assert client.reply() == "Plain answer.Steered answer."


async def test_drop_takes_one_away_and_bad_requests_change_nothing(
    env: Env, fake: FakeOllama
) -> None:
    async with gated_turn(env, fake, Turn.text("Done."), Turn.text("Then c.")) as running:
        await send(running, "queue", text="a")
        await send(running, "steer", text="b")
        await send(running, "queue", text="c")
        answer = await send(running, "drop", number=1)
        assert answer == {
            "waiting": [entry_of(1, "steer", "b"), entry_of(2, "follow-up", "c")],
            "dropped": entry_of(1, "follow-up", "a"),
        }
        bad: list[tuple[dict[str, Any], int, str]] = [
            ({"action": "list"}, -32602, "needs sessionId"),
            ({"sessionId": running.session_id, "action": "shout"}, -32602, "unknown action"),
            ({"sessionId": running.session_id}, -32602, "unknown action None"),
            ({"sessionId": running.session_id, "action": "steer"}, -32602, "steer needs text"),
            ({"sessionId": running.session_id, "action": "queue", "text": 7}, -32602, "needs text"),
            (
                {"sessionId": running.session_id, "action": "steer", "text": " \n "},
                -32602,
                "empty text",
            ),
            (
                {"sessionId": running.session_id, "action": "queue", "text": "x" * 100_001},
                -32602,
                f"takes at most {MAX_INPUT_CHARS:,}",
            ),
            ({"sessionId": running.session_id, "action": "drop"}, -32602, "drop needs number"),
            (
                {"sessionId": running.session_id, "action": "drop", "number": 0},
                -32602,
                "from 1",
            ),
            (
                {"sessionId": running.session_id, "action": "drop", "number": "1"},
                -32602,
                "not '1'",
            ),
            (
                {"sessionId": running.session_id, "action": "drop", "number": True},
                -32602,
                "not True",
            ),
            (
                {"sessionId": running.session_id, "action": "drop", "number": 3},
                -32602,
                "no queued input number 3; there is 1 to 2",
            ),
            ({"sessionId": "no-such-session", "action": "list"}, -32002, "no-such-session"),
        ]
        for params, code, words in bad:
            with pytest.raises(RequestError) as refused:
                await ask(running.conn, "zcoder/input", params)
            assert refused.value.code == code, params
            assert words in str(refused.value.data), (params, refused.value.data)
        listed = await send(running, "list")
        assert listed == {"waiting": [entry_of(1, "steer", "b"), entry_of(2, "follow-up", "c")]}
        done = await finish(running, env)

    assert done.stop_reason == "end_turn"
    assert fake.chat_bodies[1]["messages"][-1] == {"role": "user", "content": "b"}
    assert fake.chat_bodies[2]["messages"][-1] == {"role": "user", "content": "c"}
    assert "a" not in [m["content"] for m in fake.chat_bodies[2]["messages"]]


async def test_a_cancelled_turn_holds_what_waits_even_across_a_restart_until_resumed(
    env: Env, fake: FakeOllama
) -> None:
    async with gated_turn(env, fake) as running:
        answer = await running.conn.initialize(protocol_version=1)
        assert answer.agent_capabilities is not None
        offered = (answer.agent_capabilities.field_meta or {})["zcoder"]["input"]
        assert offered["actions"] == ["steer", "queue", "list", "drop", "resume"]
        await send(running, "steer", text="look at beta.py")
        await send(running, "queue", text="then the tests")
        await running.conn.cancel(session_id=running.session_id)
        done = await asyncio.wait_for(running.turn, WAIT_SECONDS)
        assert done.stop_reason == "cancelled"
        held = [
            entry_of(1, "steer", "look at beta.py", held=True),
            entry_of(2, "follow-up", "then the tests", held=True),
        ]
        assert await send(running, "list") == {"waiting": held}
        with pytest.raises(RequestError) as idle:
            await send(running, "steer", text="nothing runs")
        assert idle.value.code == -32600
        data = idle.value.data or {}
        assert data["reason"] == "idle"
        assert "send the text as a prompt" in data["details"]
        assert await send(running, "list") == {"waiting": held}
    assert len(fake.chat_bodies) == 1  # nothing more ran

    fake.enqueue(Turn.text("Beta looked at."), Turn.text("Tests run."))
    client = RecordingClient()
    async with loaded(client, env, fake, running.session_id) as conn:
        await client.wait_for(lambda: "is held" in client.reply())
        assert len(fake.chat_bodies) == 1  # loaded, held: nothing runs unasked
        params = {"sessionId": running.session_id}
        assert await ask(conn, "zcoder/input", {**params, "action": "list"}) == {"waiting": held}
        resumed = await ask(conn, "zcoder/input", {**params, "action": "resume"})
        assert resumed["resumed"] == 2
        assert [item["held"] for item in resumed["waiting"]] == [False, False]
        await client.wait_for(lambda: "Tests run." in client.reply())
        assert sessions(env)[0].pending == []

    steered, followed = fake.chat_bodies[1:]
    assert steered["messages"][-1] == {"role": "user", "content": "look at beta.py"}
    assert followed["messages"][-1] == {"role": "user", "content": "then the tests"}
    assert texts(user_chunks(client))[-2:] == ["**Steering**\n\nlook at beta.py", "then the tests"]
