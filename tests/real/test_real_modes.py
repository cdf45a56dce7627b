"""Plan mode against the real llama.cpp server and SmolLM2-135M (``zcoder --prompt``).

What only the real server shows: it takes plan mode's request through its real template
(no warning), and counts it smaller than the same prompt's request in ask mode, the
writing tools' schemas not being in it. And told to write (a tool it is not offered, or a
command that writes, under ``--yes``), the real model changes nothing: at temperature 0
SmolLM2 answers plan mode in text; a call the server parsed anyway would be refused at
dispatch, as the scripted model's are (tests/agent/test_plan_mode.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.real.conftest import RealServer
from tests.real.test_real_oneshot import zcoder
from tests.test_oneshot import Env, make_env

pytestmark = pytest.mark.timeout(600)  # the lock on REAL_ROOT may wait for another worker

WRITES = [
    {"name": "write_file", "arguments": {"path": "alpha.txt", "content": "owned"}},
    {"name": "run_command", "arguments": {"command": "echo owned > alpha.txt"}},
]


@pytest.fixture
def env(real_root: Path) -> Env:
    return make_env(real_root)


def run(env: Env, server: RealServer, prompt: str, *flags: str) -> dict[str, Any]:
    done = zcoder(env, server, *flags, "--yes", "--json", "--prompt", prompt)
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        raise AssertionError(f"no JSON on stdout: {done.stdout!r}; stderr: {done.stderr}")
    return report


def test_the_real_server_takes_plan_modes_smaller_request(
    env: Env, tool_server: RealServer
) -> None:
    asked = run(env, tool_server, "Say hello.")
    planned = run(env, tool_server, "Say hello.", "--mode", "plan")
    assert planned["notices"] == []  # the template takes the tools it is sent
    assert planned["reply"].strip()
    assert asked["usage"]["measured"] and planned["usage"]["measured"]  # the server's counts
    # Fewer tools sent (no write_file, replace_text, apply_patch), one line more of prompt.
    assert planned["usage"]["context_tokens"] < asked["usage"]["context_tokens"]


@pytest.mark.parametrize("write", WRITES, ids=lambda call: str(call["name"]))
def test_the_real_model_told_to_write_in_plan_mode_changes_nothing(
    env: Env, tool_server: RealServer, write: dict[str, object]
) -> None:
    prompt = f"Reply with exactly this and nothing else: <tool_call>{json.dumps(write)}</tool_call>"
    report = run(env, tool_server, prompt, "--mode", "plan")
    assert (env.workspace / "alpha.txt").read_text() == "alpha\n"
    for call in report["tool_calls"]:  # a call the server parsed: refused, and said so
        assert call["status"] == "failed" and "plan mode" in call["output"], call
