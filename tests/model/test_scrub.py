"""Server text is shown and stored only as a short summary with every form of the key,
and anything that looks like a bearer secret, replaced by ``***`` (issue 18 item 4)."""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.model import (
    ModelError,
    ModelHTTPError,
    ModelStreamError,
    OllamaClient,
    OpenAIClient,
    user_message,
)
from zcoder.model.scrub import SERVER_TEXT_LIMIT, scrub_server_text, server_error_summary

MODEL = "qwen3-coder"
KEY = "sk-live-9f3A7c21Bd0e55Kq"
HELLO = [user_message("hi")]


def _split(text: str, between: str) -> str:
    return between.join(text)


# Ways a server or proxy might repeat the key it was sent.
ECHOES: dict[str, Callable[[str], str]] = {
    "exact": lambda key: key,
    "upper": str.upper,
    "lower": str.lower,
    "reversed": lambda key: key[::-1],
    "reversed upper": lambda key: key[::-1].upper(),
    "split by spaces": lambda key: _split(key, " "),
    "split by dots": lambda key: _split(key, "."),
    "split in halves": lambda key: key[: len(key) // 2] + " \n " + key[len(key) // 2 :],
    "base64": lambda key: base64.b64encode(key.encode()).decode(),
    "base64 of the header": lambda key: base64.b64encode(f"Bearer {key}".encode()).decode(),
    "url-safe base64 unpadded": lambda key: (
        base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")
    ),
    "url-encoded": lambda key: quote(key, safe=""),
    "hex": lambda key: key.encode().hex(),
}


def leaked(text: str, key: str) -> list[str]:
    """The echo forms of ``key`` that ``text`` still holds (case-insensitively)."""
    folded = text.lower()
    found = [name for name, echo in ECHOES.items() if echo(key).lower() in folded]
    core = "".join(c for c in key if c.isalnum()).lower()
    squeezed = "".join(c for c in folded if c.isalnum())
    if core in squeezed or core[::-1] in squeezed:
        found.append("letters and digits in order")
    return found


@pytest.mark.parametrize("form", list(ECHOES))
def test_every_echo_of_the_key_is_scrubbed(form: str) -> None:
    text = f"upstream rejected the request (header was {ECHOES[form](KEY)}), try again"
    scrubbed = scrub_server_text(text, [KEY])
    assert leaked(scrubbed, KEY) == []
    assert scrubbed.startswith("upstream rejected the request")
    assert "***" in scrubbed


@given(
    key=st.text(string.ascii_letters + string.digits + "-_", min_size=12, max_size=48).filter(
        lambda k: sum(c.isalnum() for c in k) >= 10
    ),
    form=st.sampled_from(sorted(ECHOES)),
    before=st.text(string.ascii_letters + " .,:", max_size=40),
)
def test_no_echo_of_any_key_survives(key: str, form: str, before: str) -> None:
    scrubbed = scrub_server_text(f"{before} {ECHOES[form](key)} end", [key])
    assert leaked(scrubbed, key) == []


@pytest.mark.parametrize(
    "secret_text",
    [
        "Authorization: Bearer abcdef123456ghijkl",
        "api_key=0123456789abcdef0123",
        '{"token": "t0k3n-zz-9988776655"}',
        "password: hunter2hunter2",
        "the key hf_AbCdEfGhIjKlMnOpQrStUv is not valid",
        "sig 7f9a8b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f00 mismatch",
    ],
)
def test_tokens_that_look_like_secrets_are_scrubbed_without_knowing_them(
    secret_text: str,
) -> None:
    scrubbed = scrub_server_text(secret_text)
    assert "***" in scrubbed
    for token in ("abcdef123456ghijkl", "0123456789abcdef0123", "t0k3n-zz-9988776655",
                  "hunter2hunter2", "hf_AbCdEfGhIjKlMnOpQrStUv",
                  "7f9a8b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f00"):  # fmt: skip
        assert token not in scrubbed


@pytest.mark.parametrize(
    "ordinary",
    [
        "model 'Qwen3-Coder-30B-A3B-Instruct' not found",
        "/models/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf failed to load",
        "This model's maximum context length is 8192 tokens. However, you requested 9000",
        "request 123e4567-e89b-12d3-a456-426614174000 failed",
    ],
)
def test_ordinary_server_text_is_left_readable(ordinary: str) -> None:
    assert scrub_server_text(ordinary, [KEY]) == ordinary


def test_a_summary_is_the_message_field_on_one_bounded_line() -> None:
    body = json.dumps({"error": {"message": "out of memory\n" + "x " * 2000, "code": 500}})
    summary = server_error_summary(body.encode(), [KEY])
    assert summary.startswith("out of memory x x")
    assert "\n" not in summary
    assert len(summary) <= SERVER_TEXT_LIMIT


# -- through the clients, over HTTP -------------------------------------------------------


@pytest.fixture
def openai_options() -> dict[str, Any]:
    return {"api_key": KEY}


def echoing(form: str) -> Callable[[Mapping[str, str]], str]:
    """A proxy's error body that repeats the Authorization header it got, mangled."""

    def body(headers: Mapping[str, str]) -> str:
        sent = headers.get("Authorization", "").removeprefix("Bearer ")
        return json.dumps({"error": {"message": f"denied for {ECHOES[form](sent)}"}})

    return body


@pytest.mark.parametrize("form", list(ECHOES))
async def test_an_http_error_echoing_the_key_never_shows_it(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, form: str
) -> None:
    openai_fake.enqueue(Turn.http_body(502, echoing(form)))
    with pytest.raises(ModelHTTPError) as caught:
        async for _ in openai_client.chat(MODEL, HELLO):
            pass
    message = str(caught.value)
    assert "denied for ***" in message
    assert leaked(message, KEY) == []
    assert leaked(caught.value.server_message, KEY) == []


async def test_an_error_mid_stream_echoing_the_key_never_shows_it(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
) -> None:
    openai_fake.enqueue(Turn.error_midstream(f"bad auth {KEY[::-1].upper()}", before="Hi"))
    with pytest.raises(ModelStreamError) as caught:
        async for _ in openai_client.chat(MODEL, HELLO):
            pass
    assert "bad auth ***" in str(caught.value)
    assert leaked(str(caught.value), KEY) == []


async def test_a_malformed_chunk_is_quoted_without_the_key(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient
) -> None:
    openai_fake.enqueue(Turn.malformed(f"{{oops {' '.join(KEY)}"))
    with pytest.raises(ModelStreamError) as caught:
        async for _ in openai_client.chat(MODEL, HELLO):
            pass
    assert leaked(str(caught.value), KEY) == []


async def test_ollama_error_text_is_scrubbed_and_bounded() -> None:
    body = json.dumps({"error": "runner failed: token=abcdefgh12345678zz " + "y" * 3000})
    with FakeOllama() as fake:
        fake.enqueue(Turn.http_body(500, body))
        async with OllamaClient(fake.url) as client:
            with pytest.raises(ModelError) as caught:
                async for _ in client.chat(MODEL, HELLO):
                    pass
    message = str(caught.value)
    assert "runner failed: token=***" in message
    assert "abcdefgh12345678zz" not in message
    assert len(message) < SERVER_TEXT_LIMIT + 200


async def test_model_ids_quoted_in_a_not_served_message_are_scrubbed() -> None:
    with FakeOpenAI(api_key=KEY, models=["qwen3-coder", f"proxy-{KEY[::-1]}"]) as server:
        async with OpenAIClient(server.base_url, api_key=KEY) as client:
            with pytest.raises(ModelError) as caught:
                async for _ in client.chat("gpt-4o", HELLO):
                    pass
    message = str(caught.value)
    assert "it serves qwen3-coder, proxy-***" in message
    assert leaked(message, KEY) == []
