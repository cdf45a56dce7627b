"""The fake Ollama itself: tags, the demo brain, scripts, and the by-hand command."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, demo_turn, load_script
from zcoder.model import AssistantReply, OllamaClient, tool_result_message, user_message

REPO = Path(__file__).resolve().parents[2]
LIST_FILES = [{"type": "function", "function": {"name": "list_files", "parameters": {}}}]


async def test_list_models_returns_the_configured_names():
    with FakeOllama(models=["alpha:latest", "beta:7b"]) as server:
        async with OllamaClient(server.url) as client:
            assert await client.list_models() == ["alpha:latest", "beta:7b"]
        assert server.requests[-1].path == "/api/tags"
        assert server.requests[-1].method == "GET"


async def test_demo_brain_lists_files_then_echoes_the_tool_result():
    with FakeOllama(demo=True) as server:
        async with OllamaClient(server.url) as client:
            history = [user_message("Please list the files here")]
            first = AssistantReply()
            async for event in client.chat("m", history, tools=LIST_FILES):
                first.add(event)
            [tool_call] = first.tool_calls
            assert (tool_call.name, tool_call.arguments) == ("list_files", {"path": "."})
            history += [first.to_message(), tool_result_message(tool_call, "README.md\nsrc/")]
            second = AssistantReply()
            async for event in client.chat("m", history, tools=LIST_FILES):
                second.add(event)
    assert second.tool_calls == []
    assert "README.md\nsrc/" in second.content
    assert second.content.startswith("list_files returned")


def test_demo_brain_greets_anything_else():
    turn = demo_turn({"messages": [{"role": "user", "content": "hello"}]})
    assert "list the files" in "".join(
        line["message"]["content"] for line in turn.lines if isinstance(line, dict)
    )


def test_demo_brain_sends_with_a_tool_the_catalog_lists_or_says_it_cannot():
    listing = "beta — pid 7, ready, id 7-42\n  /tmp/beta · coding · m"
    tell = {"role": "user", "content": "tell the beta agent that it works"}
    listed = {"role": "tool", "tool_name": "list_agents", "content": listing}
    catalog = "Load one of these tools:\n- send_agent_message: Send a task…"
    tools = [
        {"type": "function", "function": {"name": "list_agents"}},
        {"type": "function", "function": {"name": "load_tools", "description": catalog}},
    ]
    turn = demo_turn({"messages": [tell, listed], "tools": tools})
    [sent] = first_message(turn)["tool_calls"]
    assert sent["function"]["name"] == "send_agent_message"
    assert sent["function"]["arguments"] == {"target": "7-42", "message": "it works"}
    alone = demo_turn({"messages": [tell, listed], "tools": tools[:1]})
    assert "tool_calls" not in first_message(alone)  # neither offered nor listed


def first_message(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = next(line for line in turn.lines if isinstance(line, dict))["message"]
    return message


def test_scripted_turns_come_from_a_json_file(tmp_path: Path):
    script = tmp_path / "turns.json"
    script.write_text(
        json.dumps(
            {
                "models": ["scripted:1b"],
                "turns": [
                    {"text": "hi", "thinking": "so"},
                    {"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}, "id": "c"}]},
                    {"error_midstream": "boom"},
                    {"http_error": 404},
                    {"stall": 5, "before": "wait"},
                    {"malformed": "nope"},
                    {"disconnect": True},
                ],
            }
        )
    )
    turns, models = load_script(str(script))
    assert models == ["scripted:1b"]
    assert len(turns) == 7
    assert turns[3].status == 404
    assert turns[4].ending == "stall" and turns[4].stall_seconds == 5


def test_unknown_spec_is_rejected():
    with pytest.raises(ValueError, match="unknown turn spec"):
        Turn.from_spec({"sing": "la"})


def test_only_loopback_addresses_are_accepted():
    with pytest.raises(ValueError, match="loopback"):
        FakeOllama(host="192.0.2.1")


def test_runs_by_hand_as_a_module(tmp_path: Path):
    with FakeOllama() as probe:
        port = probe.port  # a port that was free a moment ago
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"text": "scripted hello"}]))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "tests.fixtures.fake_ollama", "--port", str(port)]
    command += ["--script", str(script), "--delay", "0", "--quiet"]
    process = subprocess.Popen(command, cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()
        assert f"listening on http://127.0.0.1:{port}" in banner
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        with httpx.Client(base_url=url, trust_env=False, timeout=5) as http:
            while True:
                try:
                    tags = http.get("/api/tags").json()
                    break
                except httpx.ConnectError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            assert [m["name"] for m in tags["models"]] == ["qwen3-coder:latest", "llama3.2:latest"]
            body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
            lines = http.post("/api/chat", json=body).text.splitlines()
        records = [json.loads(line) for line in lines]
        assert "".join(r["message"]["content"] for r in records) == "scripted hello"
        assert records[-1]["done"] is True
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()
