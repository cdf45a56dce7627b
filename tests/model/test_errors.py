"""Failures: each becomes one clear ModelError, and stopping a stalled reply hangs up."""

import asyncio
import socket

import httpx
import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.model import (
    ContentDelta,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelNotFound,
    ModelStreamError,
    ModelTimeout,
    NotOllama,
    OllamaClient,
    OllamaUnreachable,
    ToolsUnsupported,
    user_message,
)
from zcoder.model.errors import OTHER_WAYS_TO_A_MODEL

MODEL = "qwen3-coder"
HELLO = [user_message("hi")]
TOOLS = [{"type": "function", "function": {"name": "list_files", "parameters": {}}}]


async def drain(client: OllamaClient, **kwargs) -> list[object]:
    return [event async for event in client.chat(MODEL, HELLO, **kwargs)]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_midstream_error_line_raises_stream_error_after_earlier_deltas(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.error_midstream("an unknown error was encountered", before="partial "))
    seen: list[object] = []
    with pytest.raises(ModelStreamError) as caught:
        async for event in client.chat(MODEL, HELLO):
            seen.append(event)
    assert seen == [ContentDelta("partial ")]
    assert str(caught.value) == (
        "Ollama reported an error mid-stream: an unknown error was encountered"
    )
    assert not caught.value.retryable_before_response


async def test_malformed_ndjson_line_raises_stream_error(fake: FakeOllama, client: OllamaClient):
    fake.enqueue(Turn.malformed("<html>oops</html>"))
    with pytest.raises(ModelStreamError, match="malformed response from Ollama"):
        await drain(client)


async def test_stream_ending_without_done_raises_stream_error(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.raw({"message": {"role": "assistant", "content": "half"}, "done": False}))
    with pytest.raises(ModelStreamError, match="before the reply was done"):
        await drain(client)


async def test_http_400_without_tool_support_raises_tools_unsupported(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.http_error(400))
    with pytest.raises(ToolsUnsupported) as caught:
        await drain(client, tools=TOOLS)
    assert str(caught.value).startswith(f"model '{MODEL}' does not support tools")
    assert not caught.value.retryable_before_response


async def test_http_404_raises_model_not_found_with_pull_hint(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.http_error(404))
    with pytest.raises(ModelNotFound) as caught:
        await drain(client)
    assert str(caught.value) == f"model '{MODEL}' not found; run `ollama pull {MODEL}`"
    assert caught.value.model == MODEL


async def test_the_ollama_backend_pointed_at_llama_server_suggests_the_openai_backend():
    # llama-server answers /api/chat with its own 404 body, not Ollama's {"error": "..."}.
    with FakeOpenAI() as server:
        async with OllamaClient(server.url) as client:
            with pytest.raises(NotOllama) as caught:
                await drain(client)
    message = str(caught.value)
    assert "not found; run `ollama pull" not in message
    assert "looks like an OpenAI-compatible server" in message
    assert f"--backend openai --base-url {server.url}/v1" in message
    assert "File Not Found" in message  # what the server said, scrubbed and short


async def test_a_404_in_plain_text_is_not_taken_for_a_missing_model(fake: FakeOllama):
    fake.enqueue(
        Turn.http_body(404, "<html>nginx: no such location</html>", content_type="text/html")
    )
    async with OllamaClient(fake.url) as client:
        with pytest.raises(NotOllama, match="--backend openai"):
            await drain(client)


async def test_not_found_text_on_another_status_also_means_model_not_found(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.http_error(400, 'model "qwen3-coder" not found, try pulling it first'))
    with pytest.raises(ModelNotFound):
        await drain(client)


@pytest.mark.parametrize(
    ("status", "server_text"),
    [
        (500, "llama runner process has terminated: exit status 2"),
        (503, "server busy, please try again.  maximum pending requests exceeded"),
        (400, "invalid options"),
    ],
)
async def test_other_http_errors_carry_status_and_server_text(
    fake: FakeOllama, client: OllamaClient, status: int, server_text: str
):
    fake.enqueue(Turn.http_error(status, server_text))
    with pytest.raises(ModelHTTPError) as caught:
        await drain(client)
    error = caught.value
    assert error.status == status
    assert error.server_message == " ".join(server_text.split())
    assert f"HTTP {status}" in str(error)
    assert error.server_message in str(error)
    assert not error.retryable_before_response


async def test_connection_refused_raises_unreachable_with_how_to_start():
    port = free_port()
    async with OllamaClient(f"127.0.0.1:{port}") as client:
        with pytest.raises(OllamaUnreachable) as caught:
            await drain(client)
    host = f"http://127.0.0.1:{port}"
    assert str(caught.value) == (
        f"Ollama is not reachable at {host}; start it with `ollama serve`" + OTHER_WAYS_TO_A_MODEL
    )
    assert caught.value.retryable_before_response
    assert isinstance(caught.value, ModelError)


async def test_list_models_unreachable_raises_the_same_error():
    async with OllamaClient(f":{free_port()}") as client:
        with pytest.raises(OllamaUnreachable, match="start it with `ollama serve`"):
            await client.list_models()


async def test_default_host_message_names_the_default_address():
    assert str(OllamaUnreachable("http://127.0.0.1:11434")) == (
        "Ollama is not reachable at http://127.0.0.1:11434; start it with `ollama serve`"
        + OTHER_WAYS_TO_A_MODEL
    )


def test_no_server_names_every_way_to_a_model_in_one_line():
    message = str(OllamaUnreachable("http://127.0.0.1:11434"))
    assert "\n" not in message
    for way in ("ollama serve", "--base-url", "--gguf FILE", "make demo"):
        assert way in message


async def test_transport_seam_maps_connect_errors_too():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with OllamaClient("ollama.invalid:1", transport=httpx.MockTransport(refuse)) as client:
        with pytest.raises(OllamaUnreachable, match=r"http://ollama\.invalid:1"):
            await drain(client)


async def test_connection_lost_before_response_is_retryable():
    def drop(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("Server disconnected without sending a response.")

    async with OllamaClient(transport=httpx.MockTransport(drop)) as client:
        with pytest.raises(ModelConnectionError) as caught:
            await drain(client)
    assert caught.value.retryable_before_response
    assert "before it answered" in str(caught.value)


async def cancel_and_see_the_connection_closed(fake: FakeOllama, task: asyncio.Task[None]) -> None:
    """Cancels ``task``, which reads a stalled reply, and checks the client hung up."""
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=10)
    assert await asyncio.to_thread(fake.wait_for_disconnect, 5.0)


async def test_cancelling_the_consumer_during_a_stall_closes_the_connection(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.stall(before="Thinking about it"))
    first_delta = asyncio.Event()

    async def consume() -> None:
        async for _event in client.chat(MODEL, HELLO):
            first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), timeout=10)
    assert not fake.wait_for_disconnect(0.2), "the stall must hold until the cancel"
    await cancel_and_see_the_connection_closed(fake, task)


async def test_cancelling_before_any_line_arrives_also_closes_the_connection(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.stall())

    async def consume() -> None:
        async for _event in client.chat(MODEL, HELLO):
            pass

    task = asyncio.create_task(consume())
    deadline = asyncio.get_running_loop().time() + 10
    while not fake.chat_bodies and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # let the headers arrive so the client is mid-read
    await cancel_and_see_the_connection_closed(fake, task)


async def test_a_stall_longer_than_the_read_timeout_raises_model_timeout(fake: FakeOllama):
    fake.enqueue(Turn.stall(before="start"))
    async with OllamaClient(fake.url, read_timeout=0.3) as client:
        with pytest.raises(ModelTimeout) as caught:
            await drain(client)
    assert "sent nothing for 0.3 seconds" in str(caught.value)
    assert not caught.value.retryable_before_response
    assert await asyncio.to_thread(fake.wait_for_disconnect, 5.0)


async def test_unscripted_request_to_a_test_server_fails_loudly(
    fake: FakeOllama, client: OllamaClient
):
    with pytest.raises(ModelHTTPError, match="no scripted turn left"):
        await drain(client)


async def test_other_not_found_text_is_not_mistaken_for_a_missing_model(
    fake: FakeOllama, client: OllamaClient
):
    fake.enqueue(Turn.http_error(500, "open /tmp/blob: file not found"))
    with pytest.raises(ModelHTTPError, match="file not found"):
        await drain(client)
