"""fetch_url with the real small model (SmolLM2-135M on llama.cpp's server), against the
loopback web server the settings allow.

What the model showed: told to repeat a fetch_url call while fetch_url is only listed in
load_tools' catalog (offered on demand), it does not (it answers a word); told to repeat
the load_tools call, it does, and once the session has fetch_url loaded (resumed: the
loaded tools are read back from its history), it repeats the fetch_url call exactly. The
page goes back to the server as a <web_page> record, which the model then answers."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.web_server import INJECTION, WebServer, web_server
from tests.real.conftest import RealServer
from tests.real.test_real_oneshot import env, tool_messages, zcoder
from tests.test_oneshot import Env
from zcoder.sessions import SessionStore

__all__ = ["env", "web_server"]

pytestmark = pytest.mark.timeout(600)  # the lock on REAL_ROOT may wait for another worker

ROOM = "96"
"""ZCODER_MAX_OUTPUT_TOKENS: a call with a URL is longer than the other real tests' calls."""


def repeat(name: str, arguments: dict[str, str]) -> str:
    call = json.dumps({"name": name, "arguments": arguments})
    return f"Reply with exactly this and nothing else: <tool_call>{call}</tool_call>"


def test_the_real_model_loads_fetch_url_then_fetches_an_allowed_loopback_page(
    env: Env, tool_server: RealServer, web_server: WebServer
) -> None:
    env.vars.update(ZCODER_WEB_ALLOW="127.0.0.1", ZCODER_COMMAND_POLICY="allow")
    url = web_server.url("/page")

    loading = zcoder(
        env, tool_server, "--json", "--prompt", repeat("load_tools", {"name": "fetch_url"}),
        ZCODER_MAX_OUTPUT_TOKENS=ROOM,
    )  # fmt: skip
    [loaded] = json.loads(loading.stdout)["tool_calls"]
    assert loaded["name"] == "load_tools" and loaded["status"] == "completed", loaded
    with SessionStore(env.home) as store:
        (session,) = store.list_sessions(env.workspace, "coding")

    done = zcoder(
        env, tool_server, "--json", "--resume", session.id, "--prompt",
        repeat("fetch_url", {"url": url}), ZCODER_MAX_OUTPUT_TOKENS=ROOM,
    )  # fmt: skip
    report = json.loads(done.stdout)
    calls = [c for c in report["tool_calls"] if c["name"] == "fetch_url"]
    assert len(calls) == 1, (report, done.stderr)
    [call] = calls
    assert call["arguments"] == {"url": url} and call["status"] == "completed", call
    assert web_server.paths() == ["/page"]
    messages = tool_messages(env)
    [page] = [m for m in messages if m["role"] == "tool" and "<web_page>" in m["content"]]
    assert INJECTION in page["content"]  # marked as the page's, inside the record
    assert report["reply"].strip()  # the server answered the page
