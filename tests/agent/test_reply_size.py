"""A server that streams one line without end, or more than a reply can be, cannot fill
memory: the body is read within a line cap and a reply cap (zcoder.model.body), the reply
is stopped with an error naming the cap, what streamed before stays in the transcript, and
the idle watchdog says that bytes came without a line's end (issue 27 item 5).

Real HTTP on 127.0.0.1 against the fakes, both wire formats. Memory is asserted on what the
client read before it stopped and on what its reader held, never on time."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agent.support import EventLog, make_agent
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.fake_openai import FakeOpenAI
from tests.fixtures.model_clients import HELLO, MODEL, READ_TIMEOUT, reply_of
from zcoder.agent import AssistantMessage, ErrorNotice, Outcome, TurnFinished
from zcoder.model import OllamaClient, OpenAIClient
from zcoder.model.body import BodyReader, ReplyTooLarge
from zcoder.model.http import HttpModelClient
from zcoder.model.limits import DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_REPLY_BYTES
from zcoder.model.watch import ModelStalled, watched
from zcoder.sessions import SessionStore, TranscriptEvent

LINE_CAP = 256 * 1024
PIECE = 64 * 1024  # what the fake sends at a time: the most the reader can be past a cap
BACKENDS = ["ollama", "openai"]


def client_for(
    server: FakeOllama | FakeOpenAI,
    *,
    line: int = DEFAULT_MAX_LINE_BYTES,
    reply: int = DEFAULT_MAX_REPLY_BYTES,
) -> HttpModelClient:
    """A client of ``server`` (the wire format it speaks) with these caps."""
    if isinstance(server, FakeOpenAI):
        return OpenAIClient(
            server.base_url, read_timeout=READ_TIMEOUT, max_line_bytes=line, max_reply_bytes=reply
        )
    return OllamaClient(
        server.url, read_timeout=READ_TIMEOUT, max_line_bytes=line, max_reply_bytes=reply
    )


@dataclass
class CappedTurn:
    """A user's turn against a capped client: how it ended, its events, what the session
    store kept, and whether the server saw the client hang up while the client was open."""

    finished: TurnFinished
    log: EventLog
    stored: list[TranscriptEvent]
    hung_up: bool


async def capped_turn(
    server: FakeOllama | FakeOpenAI,
    tmp_path: Path,
    text: str,
    *,
    line: int = DEFAULT_MAX_LINE_BYTES,
    reply: int = DEFAULT_MAX_REPLY_BYTES,
) -> CappedTurn:
    """The turn ``text`` of a new agent whose client has these caps, in a private store."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with SessionStore(tmp_path / "home") as store:
        async with client_for(server, line=line, reply=reply) as client:
            agent, log, session_id = make_agent(client, store, workspace)
            finished = await agent.run_user_turn(text)
            hung_up = server.wait_for_disconnect()
        stored = store.load(session_id, workspace, agent.settings.profile.value).events
    return CappedTurn(finished, log, stored, hung_up)


@pytest.fixture(params=BACKENDS)
def server(request: pytest.FixtureRequest) -> Any:
    fake = FakeOpenAI() if request.param == "openai" else FakeOllama()
    with fake:
        yield fake


async def test_an_endless_line_ends_the_turn_with_the_line_cap_and_keeps_what_came_before(
    server: FakeOllama | FakeOpenAI, tmp_path: Path
) -> None:
    server.enqueue(Turn.endless_line(before="Here is the start", piece=PIECE))
    turn = await capped_turn(server, tmp_path, "hi", line=LINE_CAP)
    assert turn.finished.outcome is Outcome.ERROR
    assert "sent a line longer than 256 KiB without ending it" in turn.finished.error
    assert "ZCODER_MAX_LINE_BYTES" in turn.finished.error
    assert turn.hung_up  # the stream was closed, not drained
    assert server.pending == 0  # not asked again
    assert AssistantMessage("Here is the start", partial=True) in turn.log.of(AssistantMessage)
    assert any("line longer than" in e.text for e in turn.log.of(ErrorNotice))
    assert any(e.role == "error" and "256 KiB" in e.text for e in turn.stored)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_endless_line_is_read_only_up_to_the_line_cap(backend: str) -> None:
    """The bytes read before the stop and the bytes held are bounded by the cap (plus the
    one piece that crossed it), with the default caps too."""
    for cap in (LINE_CAP, DEFAULT_MAX_LINE_BYTES):
        with FakeOpenAI() if backend == "openai" else FakeOllama() as server:
            server.enqueue(Turn.endless_line(before="so far", piece=PIECE))
            async with client_for(server, line=cap) as client:
                stream = client.chat(MODEL, HELLO)
                events = []
                with pytest.raises(ReplyTooLarge) as caught:
                    async for event in stream:
                        events.append(event)
                assert reply_of(events).content == "so far"
                assert caught.value.kind == "line" and caught.value.limit == cap
                assert cap < caught.value.bytes_read <= cap + 2 * PIECE
                assert stream.body.unfinished == 0  # nothing of the line is kept
                assert server.wait_for_disconnect()


def test_the_reader_never_holds_more_than_the_line_cap() -> None:
    reader = BodyReader("the server", max_line_bytes=1000, max_reply_bytes=10**9)
    held = []
    with pytest.raises(ReplyTooLarge):
        for _ in range(10_000):
            assert reader.feed(b"y" * 7) == []
            held.append(reader.unfinished)
    assert max(held) <= 1000
    assert reader.bytes_read <= 1000 + 7


def test_lines_end_at_newline_crlf_or_cr_even_split_between_chunks() -> None:
    reader = BodyReader("the server")
    got = reader.feed(b"one\r") + reader.feed(b"\ntwo\rthree\n\nfo") + reader.feed(b"ur")
    assert got + reader.finish() == ["one", "two", "three", "", "four"]
    assert reader.bytes_read == len(b"one\r\ntwo\rthree\n\nfour")


async def test_a_reply_past_the_reply_cap_ends_with_its_error(
    server: FakeOllama | FakeOpenAI, tmp_path: Path
) -> None:
    """Complete records without end: every line is short, the whole is not."""
    cap = 4 * 1024  # some 40 records (one every 20 ms)
    server.enqueue(Turn.endless(before="Counting"))
    turn = await capped_turn(server, tmp_path, "count for ever", reply=cap)
    assert turn.finished.outcome is Outcome.ERROR
    assert "sent more than 4 KiB in one reply" in turn.finished.error
    assert "ZCODER_MAX_REPLY_BYTES" in turn.finished.error
    assert turn.hung_up
    (partial,) = turn.log.of(AssistantMessage)
    assert partial.partial and partial.text.startswith("Counting")


async def test_a_whole_json_reply_past_the_reply_cap_is_not_read_whole() -> None:
    """A server that ignores ``stream`` answers one JSON document: its size is capped too."""
    sent = 0

    async def endless_json() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'{"choices":[{"message":{"content":"'
        while True:
            sent += PIECE
            yield b"z" * PIECE

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "application/json"}, content=endless_json()
        )

    transport = httpx.MockTransport(handler)
    async with OpenAIClient(
        "http://127.0.0.1:9/v1", transport=transport, max_reply_bytes=LINE_CAP
    ) as client:
        with pytest.raises(ReplyTooLarge) as caught:
            async for _event in client.chat(MODEL, HELLO):
                pass
    assert caught.value.kind == "reply"
    assert sent <= LINE_CAP + 2 * PIECE


async def test_a_long_real_reply_passes_the_default_caps(server: FakeOllama | FakeOpenAI) -> None:
    """A 32,000-word reply streamed word by word, and a tool call whose arguments (a
    200 KB file full of characters JSON escapes) come in one line, are read whole."""
    text = "word " * 32_000
    content = 'line "quoted"\t\\ and ünïcödé\n' * 7_000
    server.enqueue(Turn.text(text))
    server.enqueue(Turn.tool_calls(call("write_file", {"path": "big.txt", "content": content})))
    async with client_for(server) as client:
        assert (client.max_line_bytes, client.max_reply_bytes) == (
            DEFAULT_MAX_LINE_BYTES,
            DEFAULT_MAX_REPLY_BYTES,
        )
        first = [event async for event in client.chat(MODEL, HELLO)]
        assert reply_of(first).content == text
        second = [event async for event in client.chat(MODEL, HELLO)]
        (tool_call,) = reply_of(second).tool_calls
        assert tool_call.arguments["content"] == content
        assert len(json.dumps(content)) > 200_000


async def test_a_slow_endless_line_is_reported_as_one_by_the_idle_watchdog(
    server: FakeOllama | FakeOpenAI,
) -> None:
    """Bytes keep coming but no line ends: the stall names the unfinished line, not
    keep-alives (which the keep-alive ending still gets)."""
    server.enqueue(Turn.endless_line(before="Hm", piece=3))
    server.enqueue(Turn.keepalive(before="Hm"))
    async with client_for(server) as client:
        with pytest.raises(ModelStalled) as caught:
            async for _event in watched(client.chat(MODEL, HELLO), idle_seconds=1.0):
                pass
        assert caught.value.arrived == "unfinished line"
        assert "bytes of a line it never ended" in str(caught.value)
        assert "keep-alives" not in str(caught.value)
        with pytest.raises(ModelStalled) as caught:
            async for _event in watched(client.chat(MODEL, HELLO), idle_seconds=1.0):
                pass
        assert caught.value.arrived == "keep-alives"
        assert "only keep-alives" in str(caught.value)
