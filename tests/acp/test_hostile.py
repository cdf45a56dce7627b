"""A client that misbehaves: ``zcoder --acp`` answers what it can, serves on, runs nothing
it was not allowed to, and when the client vanishes mid-turn saves the session and exits.

These speak raw JSON-RPC lines over the pipes, as a broken client would."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from typing import Any

from tests.acp.support import WAIT_SECONDS
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, argv, sessions

OVERSIZED = 9 * 1024 * 1024  # over zcoder.acp.transport.MAX_MESSAGE_BYTES


class RawClient:
    """``zcoder --acp`` on pipes; reads its standard output line by line."""

    def __init__(self, env: Env, fake: FakeOllama) -> None:
        self.proc = subprocess.Popen(
            argv("--acp", "--host", f"127.0.0.1:{fake.port}"),
            env=env.vars,
            cwd=env.workspace,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._buffer = b""
        self.lines: list[bytes] = []  # every line zcoder wrote, for the no-noise check

    def send(self, data: bytes | dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        if isinstance(data, dict):
            data = json.dumps(data).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    def read(self) -> dict[str, Any]:
        """The next message; every line must be one JSON object."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + WAIT_SECONDS
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, "zcoder --acp did not answer"
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, "zcoder --acp closed its output"
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.lines.append(line)
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    def answer_to(self, request_id: int) -> dict[str, Any]:
        """The response to ``request_id``, skipping the notifications before it."""
        while True:
            message = self.read()
            if message.get("id") == request_id and "method" not in message:
                return message

    def vanish(self) -> int:
        """Close both pipes as a dying client would; zcoder's exit status."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.stdout.close()
        return self.proc.wait(timeout=WAIT_SECONDS)


def test_bad_messages_get_json_rpc_errors_and_the_server_serves_on(
    env: Env, fake: FakeOllama
) -> None:
    client = RawClient(env, fake)
    try:
        client.send(b"this is not json {\n")
        error = client.read()
        assert (error["id"], error["error"]["code"]) == (None, -32700)

        client.send(b"\xff\xfe\x00 not text\n")
        assert client.read()["error"]["code"] == -32700

        client.send(b"[1, 2, 3]\n")
        error = client.read()
        assert (error["id"], error["error"]["code"]) == (None, -32600)

        client.send({"jsonrpc": "2.0", "id": 5, "params": {}})  # neither request nor response
        error = client.read()
        assert (error["id"], error["error"]["code"]) == (5, -32600)

        client.request(7, "no/such/method", {})
        error = client.read()
        assert (error["id"], error["error"]["code"]) == (7, -32601)

        client.request(8, "session/new", {"mcpServers": []})  # no cwd
        error = client.read()
        assert (error["id"], error["error"]["code"]) == (8, -32602)

        head = b'{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"pad": "'
        client.send(head + b"x" * OVERSIZED + b'"}}\n')
        error = client.read()
        assert (error["id"], error["error"]["code"]) == (9, -32600)
        assert "too large" in error["error"]["message"]

        client.request(10, "session/prompt", {"sessionId": "nope", "prompt": []})
        assert client.read()["error"]["code"] == -32002

        client.request(11, "initialize", {"protocolVersion": 1})
        answer = client.read()
        assert answer["id"] == 11
        assert answer["result"]["protocolVersion"] == 1
        assert answer["result"]["agentCapabilities"]["loadSession"] is True
    finally:
        code = client.vanish()
    assert code == 0
    # initialize asks whether the model takes images (/api/show); nothing else is asked.
    assert [request.path for request in fake.requests] == ["/api/show"]
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in client.lines)


def test_a_client_that_vanishes_mid_turn_runs_nothing_and_the_session_is_saved(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": "touch ran.txt"}, id="c1")))
    client = RawClient(env, fake)
    try:
        client.request(1, "initialize", {"protocolVersion": 1})
        client.answer_to(1)
        client.request(2, "session/new", {"cwd": str(env.workspace), "mcpServers": []})
        session_id = client.answer_to(2)["result"]["sessionId"]
        client.request(
            3,
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "touch it"}]},
        )
        while True:  # until zcoder asks for permission, which is never answered
            message = client.read()
            if message.get("method") == "session/request_permission":
                break
        assert message["params"]["toolCall"]["toolCallId"] == "c1"
    finally:
        code = client.vanish()

    assert code == 0
    assert not (env.workspace / "ran.txt").exists()
    (data,) = sessions(env)
    assert data.info.id == session_id
    assert data.user_ledger == ["touch it"]
    (tool,) = [e for e in data.events if e.role == "tool"]
    assert tool.metadata["status"] in ("failed", "interrupted")
