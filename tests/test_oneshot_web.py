"""fetch_url under --prompt: asked on the terminal with the URL, ``a`` naming the host it
allows (and allowing only it); --offline sends the model no such tool and refuses it."""

from __future__ import annotations

import json
import sys

import pexpect

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.web_server import WebServer, web_server
from tests.test_oneshot import Env, env, zcoder_bytes

__all__ = ["env", "web_server"]

RUN_TIMEOUT = 30.0


def finish(response: str) -> Turn:
    return Turn.tool_calls(call("finish", {"status": "complete", "response": response}))


def test_the_terminal_question_shows_the_url_and_a_allows_that_host(
    env: Env, web_server: WebServer
) -> None:
    page, text = web_server.url("/page"), web_server.url("/text")
    env.vars["ZCODER_WEB_ALLOW"] = "127.0.0.1"
    with FakeOllama() as fake:
        fake.enqueue(
            Turn.tool_calls(call("fetch_url", {"url": page})),
            Turn.tool_calls(call("fetch_url", {"url": text})),
            finish("read"),
        )
        args = ["--prompt", "read", "--host", f"127.0.0.1:{fake.port}", "-w", str(env.workspace)]
        child = pexpect.spawn(
            sys.executable,
            ["-m", "zcoder", *args],
            env=env.vars,
            cwd=str(env.workspace),
            timeout=RUN_TIMEOUT,
        )
        child.expect_exact(b"[n]o: ")
        asked = child.before.decode()
        child.sendline(b"a")
        child.expect(pexpect.EOF)
        child.close()
        results = [m for m in fake.chat_bodies[2]["messages"] if m.get("role") == "tool"]
    assert f"Fetch this web page?\r\n  GET {page}" in asked
    assert "[a]llow 127.0.0.1 for this run" in asked
    assert child.exitstatus == 0
    assert web_server.paths() == ["/page", "/text"]  # the second page was not asked about
    assert results[0]["content"].startswith("<web_page>")


def test_offline_sends_no_web_tool_and_refuses_a_call(env: Env, web_server: WebServer) -> None:
    env.vars["ZCODER_WEB_ALLOW"] = "127.0.0.1"
    env.vars["ZCODER_COMMAND_POLICY"] = "allow"
    with FakeOllama() as fake:
        fake.enqueue(
            Turn.tool_calls(call("fetch_url", {"url": web_server.url("/page")})), finish("ok")
        )
        done = zcoder_bytes(
            env, "--offline", "--prompt", "read", "--host", f"127.0.0.1:{fake.port}",
            "-w", str(env.workspace),
        )  # fmt: skip
        first, second = fake.chat_bodies[:2]
    assert done.returncode == 0
    assert "fetch_url" not in json.dumps(first["tools"])
    [result] = [m for m in second["messages"] if m.get("role") == "tool"]
    assert "there is no tool named 'fetch_url'" in result["content"]
    assert web_server.requests == []
