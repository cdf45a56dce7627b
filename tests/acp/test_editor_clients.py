"""What editors nobody here wrote showed (toad, acpx, the TypeScript SDK): tool-call ids
unique in a session, a new file's diff from ``oldText: null``, a session kept though never
prompted, an edit waiting for approval reported ``pending``, and zcoder's notices as the
protocol's ``notice`` updates for a client that takes them (agent messages otherwise)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ToolCallStart

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder, new_session
from tests.acp.test_hostile import RawClient
from tests.acp.test_session import prompt
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, sessions
from zcoder.acp.updates import replay
from zcoder.agent.cancellation import STOPPED_KEY
from zcoder.sessions import SessionStore
from zcoder.sessions.records import TranscriptEvent


def _started_ids(client: RecordingClient) -> list[str]:
    return [u.tool_call_id for u in client.updates if isinstance(u, ToolCallStart)]


@pytest.mark.parametrize(
    "server_id",
    [
        pytest.param(None, id="server-sends-none"),
        pytest.param("fc_1", id="server-repeats-its-own"),
    ],
)
async def test_tool_call_ids_stay_unique_in_a_session_whose_server_sends_none_or_repeats(
    env: Env, fake: FakeOllama, server_id: str | None
) -> None:
    # Ollama before 0.12.10 sends no ids: each turn's first call would be "call_0". A
    # server that numbers its ids per reply sends "fc_1" every turn: passed through, the
    # editor would merge the turns' cards into one.
    fake.enqueue(
        Turn.tool_calls(call("list_files", {"path": "."}, id=server_id)),
        Turn.text("first"),
        Turn.tool_calls(call("read_file", {"path": "alpha.txt"}, id=server_id)),
        Turn.text("second"),
        Turn.tool_calls(call("list_files", {"path": "."}, id=server_id)),
        Turn.text("third"),
    )
    first = RecordingClient()
    async with acp_zcoder(env, fake, first) as (conn, _):
        session_id = await new_session(conn, env)
        await prompt(conn, session_id, "list")
        await prompt(conn, session_id, "read")
    live = _started_ids(first)
    assert len(live) == len(set(live)) == 2

    # Loaded in another process and going on: the new call's id is new there too.
    again = RecordingClient()
    async with acp_zcoder(env, fake, again) as (conn, _):
        await conn.initialize(protocol_version=1)
        await asyncio.wait_for(
            conn.load_session(cwd=str(env.workspace), session_id=session_id), WAIT_SECONDS
        )
        await prompt(conn, session_id, "list again")
    replayed_and_new = _started_ids(again)
    assert replayed_and_new[:2] == live
    assert len(replayed_and_new) == len(set(replayed_and_new)) == 3

    # The history sent to the model pairs each result with its call by those ids.
    history = fake.chat_bodies[-1]["messages"]
    calls = [c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert calls == results == replayed_and_new


def _prompt_raw(client: RawClient, env: Env, capabilities: dict[str, Any]) -> str:
    client.request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
    client.answer_to(1)
    client.request(2, "session/new", {"cwd": str(env.workspace), "mcpServers": []})
    session_id = str(client.answer_to(2)["result"]["sessionId"])
    client.request(
        3, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    return session_id


def _one_raw_turn(env: Env, fake: FakeOllama, capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    """What a raw client offering ``capabilities`` received in one prompt's turn (its
    permission requests allowed once)."""
    client = RawClient(env, fake)
    try:
        _prompt_raw(client, env, capabilities)
        return _until_answered(client, 3)
    finally:
        assert client.vanish() == 0


def _until_answered(client: RawClient, request_id: int) -> list[dict[str, Any]]:
    """Every message before the answer to ``request_id`` (permission requests allowed)."""
    seen: list[dict[str, Any]] = []
    while True:
        message = client.read()
        if message.get("id") == request_id and "method" not in message:
            return seen
        seen.append(message)
        if message.get("method") == "session/request_permission":
            client.send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
                }
            )


def test_a_new_files_edit_is_asked_with_old_text_null_and_is_pending_meanwhile(
    env: Env, fake: FakeOllama
) -> None:
    env.vars["ZCODER_EDITS"] = "ask"
    fake.enqueue(
        Turn.tool_calls(call("write_file", {"path": "new.txt", "content": "hello\n"}, id="w1")),
        Turn.text("Written."),
    )
    seen = _one_raw_turn(env, fake, {})
    asked = [m for m in seen if m.get("method") == "session/request_permission"]
    (request,) = asked
    (diff,) = request["params"]["toolCall"]["content"]
    # Present and null (toad shows no diff without it): the file did not exist.
    assert diff["type"] == "diff" and "oldText" in diff and diff["oldText"] is None
    assert diff["newText"] == "hello\n"
    states = [
        m["params"]["update"].get("status")
        for m in seen
        if m.get("method") == "session/update"
        and m["params"]["update"].get("toolCallId") == "w1"
        and m["params"]["update"].get("status")
    ]
    # Waiting for the answer it was pending, never in progress; then it ran.
    before_asking = seen.index(request)
    first_state = next(
        m["params"]["update"]["status"]
        for m in seen[:before_asking]
        if m.get("method") == "session/update" and m["params"]["update"].get("toolCallId") == "w1"
    )
    assert first_state == "pending"
    assert states[-2:] == ["in_progress", "completed"]
    assert (env.workspace / "new.txt").read_text() == "hello\n"


async def test_a_session_made_and_never_prompted_is_kept_for_a_later_load(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(Turn.text("hello again"))
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, process):
        session_id = await new_session(conn, env)
    assert await process.wait() == 0

    # Nobody else is handed it as an empty session to reuse (the TUI, --prompt)...
    with SessionStore(env.home) as store:
        other = store.reuse_or_create(env.workspace, "coding", "m")
        assert other.id != session_id
        store.discard_if_unused(other.id)
    # ...and the client loads it, and prompts it, as acpx's `sessions new` then `prompt`.
    later = RecordingClient()
    async with acp_zcoder(env, fake, later) as (conn, _):
        await conn.initialize(protocol_version=1)
        await asyncio.wait_for(
            conn.load_session(cwd=str(env.workspace), session_id=session_id), WAIT_SECONDS
        )
        done = await prompt(conn, session_id, "hello")
    assert done.stop_reason == "end_turn"
    assert later.reply() == "hello again"
    assert [data.info.id for data in sessions(env)] == [session_id]


def _notices_and_messages(seen: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    updates = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
    notices = [u for u in updates if u["sessionUpdate"] == "notice"]
    text = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    return notices, text


def test_notices_are_the_protocols_own_for_a_client_that_takes_them(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(Turn.http_error(503, "busy"))
    client = RawClient(env, fake)
    try:
        session_id = _prompt_raw(client, env, {"session": {"notices": {}}})
        seen = _until_answered(client, 3)
        # On load, a notice is not replayed: it was a live event.
        client.request(
            4,
            "session/load",
            {"sessionId": session_id, "cwd": str(env.workspace), "mcpServers": []},
        )
        reloaded = _until_answered(client, 4)
    finally:
        assert client.vanish() == 0
    notices, reply = _notices_and_messages(seen)
    assert reply == ""  # the reply stream holds replies alone
    (error,) = notices
    assert error["severity"] == "error"
    assert "HTTP 503" in error["title"] and "\n" not in error["title"]
    replayed_notices, replayed = _notices_and_messages(reloaded)
    assert replayed_notices == [] and "zcoder:" not in replayed


def test_a_client_without_notices_gets_them_as_agent_messages(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.http_error(503, "busy"))
    seen = _one_raw_turn(env, fake, {})
    notices, text = _notices_and_messages(seen)
    assert notices == []
    # The form zcoder --connect reads back as an error (zcoder.remote.events).
    assert text.startswith("\n\n**zcoder: Ollama returned HTTP 503") and text.endswith("**\n\n")


def test_a_loaded_session_replays_no_stop_note_the_live_stream_never_sent() -> None:
    def saved(seq: int, role: Any, text: str, metadata: dict[str, Any]) -> TranscriptEvent:
        return TranscriptEvent(seq, "s", seq, role, text, metadata, 0.0)

    events = [
        saved(1, "user", "wait a minute", {}),
        saved(2, "system", "Stopped.", {STOPPED_KEY: True}),
        saved(3, "system", "Context window sized to 8192 tokens", {}),
    ]

    def texts(updates: list[Any]) -> list[str]:
        return [u.content.text for u in updates]

    shown = texts(replay(events, Path("/w")))
    assert shown == ["wait a minute", "\n\n_zcoder: Context window sized to 8192 tokens_\n\n"]
    # A client that takes notices had them live: none is replayed.
    assert texts(replay(events, Path("/w"), notices=True)) == ["wait a minute"]
