"""The OpenAI-compatible client against the fake server over real HTTP: what it sends,
what it yields, the model list and window, and errors that name their fix."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.fake_openai import FakeOpenAI
from tests.fixtures.model_clients import HELLO, LIST_FILES_SCHEMA, MODEL, collect, reply_of
from zcoder.model import (
    Done,
    ModelAuthError,
    ModelHTTPError,
    ModelNotFound,
    ModelNotServed,
    ModelStreamError,
    OpenAIClient,
    ServerUnreachable,
    ToolsUnsupported,
    make_client,
    normalize_base_url,
    system_message,
    tool_result_message,
)
from zcoder.model.errors import START_OPENAI_SERVER

KEY = "sk-test-4f9a1c0ffee"


@pytest.fixture
def openai_options() -> dict[str, Any]:
    return {"api_key": KEY}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- streaming ----------------------------------------------------------------------------


async def test_text_reasoning_and_usage_arrive_as_the_ollama_client_yields_them(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
):
    openai_fake.enqueue(Turn.thinking("Let me see.", "The answer is 4.", prompt_eval_count=321))
    events = await collect(openai_client)
    reply = reply_of(events)
    assert (reply.thinking, reply.content) == ("Let me see.", "The answer is 4.")
    done = events[-1]
    assert isinstance(done, Done) and sum(isinstance(e, Done) for e in events) == 1
    assert (done.done_reason, done.prompt_eval_count) == ("stop", 321)
    assert done.eval_count is not None and done.eval_count > 0


async def test_a_cut_off_reply_reports_length(openai_fake: FakeOpenAI, openai_client: OpenAIClient):
    openai_fake.enqueue(Turn.text("The first half", done_reason="length", eval_count=64))
    done = (await collect(openai_client, num_predict=64))[-1]
    assert isinstance(done, Done)
    assert (done.done_reason, done.eval_count) == ("length", 64)
    assert openai_fake.chat_bodies[0]["max_tokens"] == 64


async def test_the_request_carries_the_key_usage_tools_and_the_openai_history(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
):
    openai_fake.enqueue(Turn.text("ok"))
    first = call("list_files", {"path": "."}, id="call_7")
    from zcoder.model import ToolCall, assistant_message

    calls = [ToolCall(id="call_7", name="list_files", arguments={"path": "."})]
    history = [
        *HELLO,
        assistant_message("", calls),
        tool_result_message(calls[0], "a.txt"),
    ]
    await collect(
        openai_client,
        history,
        tools=[LIST_FILES_SCHEMA],
        think=True,
        num_ctx=32768,
        keep_alive="30m",
    )
    (request,) = [r for r in openai_fake.requests if r.path == "/v1/chat/completions"]
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [LIST_FILES_SCHEMA]
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert "num_ctx" not in str(body) and "keep_alive" not in body  # Ollama's, ignored here
    assistant, tool = body["messages"][2:]
    assert assistant["tool_calls"] == [
        {
            "id": first["id"],
            "type": "function",
            "function": {"name": "list_files", "arguments": '{"path": "."}'},
        }
    ]
    assert tool == {"role": "tool", "tool_call_id": "call_7", "content": "a.txt"}


async def test_warm_up_is_a_one_token_load_of_the_first_turns_prefix(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
):
    await openai_client.warm_up(
        MODEL, [system_message("You are zcoder.")], tools=[LIST_FILES_SCHEMA]
    )
    (body,) = openai_fake.load_requests
    assert body["max_tokens"] == 1
    assert body["messages"] == [
        {"role": "system", "content": "You are zcoder."},
        {"role": "user", "content": "."},
    ]
    # The same prefix as the first turn, cached by the server.
    assert body["tools"] == [LIST_FILES_SCHEMA]
    assert openai_fake.chat_bodies == [] and openai_fake.pending == 0


# -- models and the window -----------------------------------------------------------------


async def test_list_models_reads_v1_models(openai_fake: FakeOpenAI, openai_client: OpenAIClient):
    assert await openai_client.list_models() == list(openai_fake.models)
    (request,) = openai_fake.requests
    assert (request.path, request.headers["Authorization"]) == ("/v1/models", f"Bearer {KEY}")


@pytest.mark.parametrize("flavor", ["llama.cpp", "vllm", "lmstudio"])
async def test_context_length_comes_from_each_servers_metadata(flavor: Any):
    with FakeOpenAI(flavor=flavor, context_length=40960) as server:
        async with OpenAIClient(server.base_url) as client:
            assert await client.context_length(MODEL) == 40960


@pytest.mark.parametrize("flavor", ["llama.cpp", "vllm", "lmstudio"])
async def test_context_length_is_none_when_the_server_does_not_say(flavor: Any):
    with FakeOpenAI(flavor=flavor) as server:
        async with OpenAIClient(server.base_url) as client:
            assert await client.context_length(MODEL) is None


async def test_context_length_of_a_server_that_is_down_is_none():
    async with OpenAIClient(f"127.0.0.1:{free_port()}") as client:
        assert await client.context_length(MODEL) is None


# -- errors that name their fix -------------------------------------------------------------


async def test_server_not_running_says_how_to_start_one():
    url = f"http://127.0.0.1:{free_port()}/v1"
    async with OpenAIClient(url) as client:
        with pytest.raises(ServerUnreachable) as caught:
            await collect(client)
    message = str(caught.value)
    assert message.startswith(f"no OpenAI-compatible server is answering at {url}; ")
    assert START_OPENAI_SERVER in message
    assert "llama-server -m MODEL.gguf --jinja --port 8080" in message
    assert "lms server start" in message and "vllm serve MODEL" in message
    assert caught.value.retryable_before_response


@pytest.mark.parametrize("key", [None, "the-wrong-key"])
async def test_401_says_to_check_the_key_and_never_shows_it(
    openai_fake: FakeOpenAI, key: str | None
):
    openai_fake.enqueue(Turn.text("never sent"))
    async with OpenAIClient(openai_fake.base_url, api_key=key) as client:
        with pytest.raises(ModelAuthError) as caught:
            await collect(client)
        with pytest.raises(ModelAuthError):
            await client.list_models()
    message = str(caught.value)
    assert "HTTP 401" in message and "ZCODER_API_KEY" in message
    assert ("check ZCODER_API_KEY" in message) == (key is not None)
    assert KEY not in message and (key is None or key not in message)
    assert KEY not in repr(client)


async def test_an_unknown_model_names_the_models_the_server_serves(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
):
    events = openai_client.chat("gpt-5", HELLO)
    with pytest.raises(ModelNotServed) as caught:
        await anext(events)
    assert isinstance(caught.value, ModelNotFound)  # the agent treats it as one
    assert str(caught.value) == (
        f"model 'gpt-5' is not served at {openai_fake.base_url}; it serves qwen3-coder, "
        "devstral-small: choose one with -m NAME or /model"
    )


async def test_a_model_not_loaded_says_how_to_load_it(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
):
    openai_fake.models.clear()  # e.g. LM Studio with nothing loaded
    openai_fake.check_model = False
    openai_fake.enqueue(Turn.http_error(404, "Model qwen3-coder not found"))
    with pytest.raises(ModelNotServed) as caught:
        await collect(openai_client)
    assert "lms load qwen3-coder" in str(caught.value)
    assert "vllm serve qwen3-coder" in str(caught.value)


async def test_a_404_elsewhere_points_at_the_base_url(openai_fake: FakeOpenAI):
    async with OpenAIClient(f"{openai_fake.url}/api", api_key=KEY) as client:
        with pytest.raises(ModelHTTPError) as caught:
            await collect(client)
    assert caught.value.status == 404
    assert "check --base-url (ZCODER_BASE_URL), which usually ends in /v1" in str(caught.value)


async def test_tools_without_jinja_say_how_to_start_llama_server(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
):
    openai_fake.enqueue(Turn.http_error(500, "tools param requires --jinja flag"))
    with pytest.raises(ToolsUnsupported, match="start llama-server with --jinja"):
        await collect(openai_client, tools=[LIST_FILES_SCHEMA])


@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_carry_status_text_and_where_to_look(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, status: int
):
    openai_fake.enqueue(Turn.http_error(status, f"slot unavailable, key {KEY} was fine"))
    with pytest.raises(ModelHTTPError) as caught:
        await collect(openai_client)
    message = str(caught.value)
    assert f"the server at {openai_fake.base_url} returned HTTP {status}" in message
    assert "slot unavailable" in message
    assert KEY not in message and "***" in message  # a server's echo of the key is scrubbed
    assert ("server's log" in message) == (status == 500)


async def test_a_malformed_stream_is_a_stream_error(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
):
    openai_fake.enqueue(Turn.malformed("{this is not json", before="Hello"))
    with pytest.raises(ModelStreamError, match="malformed response from the server at"):
        await collect(openai_client)


# -- the base URL and the factory --------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("localhost:1234", "http://localhost:1234/v1"),
        ("http://gpu-box:8000/v1/", "http://gpu-box:8000/v1"),
        ("https://llm.example.org", "https://llm.example.org:443/v1"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
    ],
)
def test_base_urls_are_normalised(typed: str, url: str) -> None:
    assert normalize_base_url(typed) == url


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("http://user:secret@host:8080/v1", "ZCODER_API_KEY"),
        ("ftp://host/v1", "use http or https"),
        ("http://host:8080/v1?key=x", "query"),
        ("http://:8080/v1", "names no host"),
    ],
)
def test_unusable_base_urls_are_refused(typed: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        normalize_base_url(typed)
    assert "secret" not in str(caught.value)


def test_make_client_picks_the_backend() -> None:
    from zcoder.model import OllamaClient

    class Settings:
        backend = "openai"
        host = "http://127.0.0.1:11434"
        base_url = "http://127.0.0.1:8080/v1"
        api_key = None
        max_line_bytes = 1000
        max_reply_bytes = 5000

    chosen = make_client(Settings())
    assert isinstance(chosen, OpenAIClient) and chosen.base_url == Settings.base_url
    assert (chosen.max_line_bytes, chosen.max_reply_bytes) == (1000, 5000)
    Settings.backend = "ollama"
    ollama = make_client(Settings())
    assert isinstance(ollama, OllamaClient) and ollama.max_line_bytes == 1000
