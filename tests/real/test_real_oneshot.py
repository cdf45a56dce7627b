"""``zcoder --prompt`` against the real llama.cpp server and SmolLM2-135M.

A 135M model is weak, so the prompts are ones it follows at temperature 0 (told to
repeat a tool call exactly, it does) and the assertions are about the protocol: a reply
streamed and counted, a tool call made and answered with the server's id, a call written
as text recovered, the window read from the server, the warnings and errors zcoder gives.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import test_oneshot as oneshot
from tests.real.conftest import RealServer
from tests.test_oneshot import Env, make_env
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(600)  # the lock on REAL_ROOT may wait for another worker

RUN_TIMEOUT = 240.0
CAP = "48"
"""ZCODER_MAX_OUTPUT_TOKENS for every run: what a reply may cost, in tokens."""
READ_ALPHA = '{"name": "read_file", "arguments": {"path": "alpha.txt"}}'
REPEAT_CALL = f"Reply with exactly this and nothing else: <tool_call>{READ_ALPHA}</tool_call>"
"""What the model, with the tool template, repeats as a real (parsed) tool call."""
SHOW_CALL_JSON = f"Show the JSON {READ_ALPHA}"
"""What the model, with its own template (no tools), writes back as a JSON block."""


@pytest.fixture
def env(real_root: Path) -> Env:
    return make_env(real_root)


def zcoder(
    env: Env, server: RealServer, *args: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    variables = {**env.vars, **server.env(ZCODER_MAX_OUTPUT_TOKENS=CAP, ZCODER_RELAY="off")}
    variables.update(extra)
    return oneshot.zcoder(
        env, "-w", str(env.workspace), *args, variables=variables, timeout=RUN_TIMEOUT
    )


def json_run(
    env: Env, server: RealServer, prompt: str, *flags: str, **extra: str
) -> dict[str, Any]:
    done = zcoder(env, server, *flags, "--json", "--prompt", prompt, **extra)
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        raise AssertionError(f"no JSON on stdout: {done.stdout!r}; stderr: {done.stderr}")
    return report


def tool_messages(env: Env) -> list[dict[str, Any]]:
    with SessionStore(env.home) as store:
        (info,) = store.list_sessions(env.workspace, "coding")
        messages = store.load(info.id, env.workspace, "coding").messages
    return [dict(m) for m in messages]


def test_one_shot_streams_a_reply_and_reads_the_window_from_the_server(
    env: Env, tool_server: RealServer
) -> None:
    done = zcoder(env, tool_server, "--prompt", "Say hello.")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), done.stderr  # the model's reply, streamed to stdout

    report = json_run(env, tool_server, "Say hello.")
    window = tool_server.props()["default_generation_settings"]["n_ctx"]
    assert report["usage"]["context_window"] == window == tool_server.n_ctx
    assert report["usage"]["measured"] is True  # the server's own count
    assert 0 < report["usage"]["context_tokens"] < window
    assert report["exit_code"] == 0


def test_a_native_tool_round_goes_back_with_the_servers_id(
    env: Env, tool_server: RealServer
) -> None:
    assert tool_server.props()["chat_template_caps"]["supports_tools"] is True

    report = json_run(env, tool_server, REPEAT_CALL)

    assert report["notices"] == []  # a template that takes tools: no warning
    (call,) = report["tool_calls"]
    assert call["name"] == "read_file"
    assert call["arguments"] == {"path": "alpha.txt"}
    assert call["status"] == "completed"
    assert call["output"] == "alpha\n"
    assert not call["id"].startswith("recovered_")  # llama.cpp parsed it: its own id
    # The result went back under that id, and the server answered the request with it.
    assert report["outcome"] == "complete", report
    messages = tool_messages(env)
    (assistant,) = [m for m in messages if m.get("tool_calls")]
    (result,) = [m for m in messages if m["role"] == "tool"]
    assert assistant["tool_calls"][0]["id"] == call["id"] == result["tool_call_id"]
    assert messages[-1]["role"] == "assistant"  # the answer to the tool's result


def test_a_call_written_as_text_is_recovered_with_the_models_own_template(
    env: Env, own_template_server: RealServer
) -> None:
    report = json_run(env, own_template_server, SHOW_CALL_JSON)

    (call,) = report["tool_calls"]
    assert call["name"] == "read_file"
    # zcoder's, from the text (the server made none), unique in the session (call_ids.py).
    assert call["id"].startswith("recovered_")
    assert call["status"] == "completed"
    assert call["output"] == "alpha\n"
    # The server took the result back (under the recovered id) and answered it.
    messages = tool_messages(env)
    assert messages[-1]["role"] == "assistant"
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == [call["id"]]


def test_a_template_that_cannot_take_tools_is_warned_about_once(
    env: Env, own_template_server: RealServer
) -> None:
    assert own_template_server.props()["chat_template_caps"]["supports_tools"] is False

    done = zcoder(env, own_template_server, "--prompt", "Say hello.")

    warnings = [line for line in done.stderr.splitlines() if "cannot take tools" in line]
    assert len(warnings) == 1, done.stderr
    assert "--jinja --chat-template-file" in warnings[0]
    assert own_template_server.base_url in warnings[0]


def test_the_ollama_backend_pointed_at_llama_server_says_to_use_openai(
    env: Env, tool_server: RealServer
) -> None:
    done = zcoder(
        env,
        tool_server,
        "--backend",
        "ollama",
        "--host",
        tool_server.url,
        "--prompt",
        "Say hello.",
    )

    assert done.returncode != 0
    assert "OpenAI-compatible" in done.stderr, done.stderr
    assert "--backend openai" in done.stderr
    assert "ollama pull" not in done.stderr
    assert "Traceback" not in done.stderr
