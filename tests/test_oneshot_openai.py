"""``zcoder --prompt`` on the ``openai`` backend, end to end: the real program in a
subprocess, the fake OpenAI-compatible server over HTTP, a private ZCODER_HOME."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests import test_oneshot as oneshot
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.fake_openai import FakeOpenAI
from tests.test_oneshot import Env, make_env
from zcoder.sessions import SessionStore

KEY = "sk-oneshot-7d2e55aa"


@pytest.fixture
def env(tmp_path: Path) -> Env:
    """test_oneshot.py's private environment, with the server's key."""
    made = make_env(tmp_path)
    made.vars["ZCODER_API_KEY"] = KEY
    return made


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as fake:
        yield fake


def zcoder(env: Env, *args: str) -> subprocess.CompletedProcess[str]:
    return oneshot.zcoder(env, "-w", str(env.workspace), *args)


def stored_bytes(home: Path) -> bytes:
    """Everything zcoder wrote under its home (the session database and its journal)."""
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_tool_round_on_the_openai_backend(env: Env, server: FakeOpenAI) -> None:
    server.enqueue(
        Turn.tool_calls(call("read_file", {"path": "alpha.txt"}, id="call_r1")),
        Turn.text("alpha.txt says alpha."),
    )
    done = zcoder(env, "--prompt", "what does alpha say?", "--backend", "openai",
                  "--base-url", server.base_url)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout == "alpha.txt says alpha.\n"
    assert "[tool] read_file(path='alpha.txt')" in done.stderr
    assert "[tool] read_file: completed" in done.stderr
    first, second = server.chat_bodies
    assert first["messages"][-1] == {"role": "user", "content": "what does alpha say?"}
    assistant, result = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_r1"
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"path": "alpha.txt"}'
    assert result == {"role": "tool", "tool_call_id": "call_r1", "content": "alpha\n"}
    assert {r.headers.get("Authorization") for r in server.requests} == {f"Bearer {KEY}"}
    with SessionStore(env.home) as store:
        (info,) = store.list_sessions(env.workspace, "coding")
        data = store.load(info.id, env.workspace, "coding")
    assert [m["role"] for m in data.messages] == ["user", "assistant", "tool", "assistant"]
    assert KEY not in done.stdout + done.stderr
    assert KEY.encode() not in stored_bytes(env.home)


def test_the_base_url_alone_chooses_the_openai_backend(env: Env, server: FakeOpenAI) -> None:
    server.enqueue(Turn.text("hello from the server"))
    env.vars["ZCODER_BASE_URL"] = f"127.0.0.1:{server.port}"  # /v1 is added
    done = zcoder(env, "--prompt", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello from the server\n"


def test_server_not_running_says_how_to_start_one(env: Env) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    done = zcoder(env, "--prompt", "hi", "--backend", "openai", "--base-url", url)
    assert done.returncode == 1
    assert f"zcoder: no OpenAI-compatible server is answering at {url}; start one" in done.stderr
    assert "llama-server" in done.stderr and "lms server start" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_wrong_key_says_to_check_it_without_printing_it(env: Env, server: FakeOpenAI) -> None:
    env.vars["ZCODER_API_KEY"] = "sk-not-the-right-one"
    done = zcoder(env, "--prompt", "hi", "--base-url", server.base_url)
    assert done.returncode == 1
    assert f"the server at {server.base_url} refused the API key (HTTP 401)" in done.stderr
    assert "check ZCODER_API_KEY" in done.stderr
    assert "sk-not-the-right-one" not in done.stdout + done.stderr
    assert b"sk-not-the-right-one" not in stored_bytes(env.home)


def test_an_unserved_model_lists_the_served_ones(env: Env, server: FakeOpenAI) -> None:
    done = zcoder(env, "--prompt", "hi", "--base-url", server.base_url, "-m", "gpt-4o")
    assert done.returncode == 1
    assert "model 'gpt-4o' is not served at" in done.stderr
    assert "it serves qwen3-coder, devstral-small: choose one with -m NAME" in done.stderr


@pytest.mark.parametrize(
    ("args", "variables", "message"),
    [
        (("--backend", "llamacpp"), {}, "the backend must be ollama or openai (got 'llamacpp')"),
        ((), {"ZCODER_BACKEND": "vllm"}, "the backend must be ollama or openai (got 'vllm')"),
        (("--base-url", "http://u:pw@127.0.0.1:8080/v1"), {}, "set ZCODER_API_KEY instead"),
    ],
)
def test_bad_backend_settings_are_usage_errors(
    env: Env, server: FakeOpenAI, args: tuple[str, ...], variables: dict[str, str], message: str
) -> None:
    env.vars.update(variables)
    done = zcoder(env, "--prompt", "hi", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "pw" not in done.stderr  # a password in the URL is never repeated
    assert server.requests == []


def test_an_error_body_echoing_the_key_reaches_neither_screen_nor_session(
    env: Env, server: FakeOpenAI
) -> None:
    def proxy_echo(headers: Mapping[str, str]) -> str:
        sent = headers.get("Authorization", "").removeprefix("Bearer ")
        spaced = " ".join(sent.upper())
        return f'{{"error": {{"message": "denied: {sent[::-1]} / {spaced}"}}}}'

    server.enqueue(Turn.http_body(502, proxy_echo))
    done = zcoder(env, "--prompt", "hi", "--base-url", server.base_url)
    assert done.returncode == 1
    assert "returned HTTP 502" in done.stderr and "denied: ***" in done.stderr
    shown, stored = done.stdout + done.stderr, stored_bytes(env.home)
    for form in (KEY, KEY[::-1], " ".join(KEY.upper())):
        assert form.lower() not in shown.lower()
        assert form.lower().encode() not in stored.lower()
    assert b"denied: ***" in stored  # the error was stored, scrubbed
