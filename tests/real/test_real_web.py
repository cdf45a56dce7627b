"""fetch_url with the real small model (SmolLM2-135M on llama.cpp's server): told to
repeat a fetch_url call exactly, it does; the call (to a tool offered on demand, listed by
load_tools) is run against the loopback web server the settings allow, and the page goes
back to the server as a <web_page> record, which the model then answers."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.web_server import INJECTION, WebServer, web_server
from tests.real.conftest import RealServer
from tests.real.test_real_oneshot import env, tool_messages, zcoder
from tests.test_oneshot import Env

__all__ = ["env", "web_server"]

pytestmark = pytest.mark.timeout(600)  # the lock on REAL_ROOT may wait for another worker


def test_the_real_model_fetches_an_allowed_loopback_page(
    env: Env, tool_server: RealServer, web_server: WebServer
) -> None:
    url = web_server.url("/page")
    fetch = json.dumps({"name": "fetch_url", "arguments": {"url": url}})
    env.vars.update(ZCODER_WEB_ALLOW="127.0.0.1", ZCODER_COMMAND_POLICY="allow")

    prompt = f"Reply with exactly this and nothing else: <tool_call>{fetch}</tool_call>"
    # The call is longer than the other real tests' (a URL): room for it, and its answer.
    done = zcoder(env, tool_server, "--json", "--prompt", prompt, ZCODER_MAX_OUTPUT_TOKENS="96")
    report = json.loads(done.stdout)

    calls = [c for c in report["tool_calls"] if c["name"] == "fetch_url"]
    assert len(calls) == 1, (report, done.stderr)
    [call] = calls
    assert call["arguments"] == {"url": url}
    assert call["status"] == "completed", call
    assert call["output"].startswith("<web_page>") and INJECTION in call["output"]
    assert web_server.paths() == ["/page"]
    messages = tool_messages(env)
    (result,) = [m for m in messages if m["role"] == "tool"]
    assert result["content"].startswith("<web_page>")
    assert messages[-1]["role"] == "assistant"  # the server answered the page
