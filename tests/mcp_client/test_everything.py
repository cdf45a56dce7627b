"""The MCP reference server ``@modelcontextprotocol/server-everything`` (npm), over stdio
and over streamable HTTP. ``make unit`` installs it into the venv (make mcp-test-servers)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_client.support import (
    EVERYTHING,
    free_port,
    needs_everything,
    serving,
    write_servers,
)
from zcoder.mcp.manager import McpManager
from zcoder.mcp.results import result_text

pytestmark = needs_everything


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """server-everything's streamable HTTP transport on a free loopback port."""
    port = free_port()
    argv = [str(EVERYTHING), "streamableHttp"]
    env = {**os.environ, "PORT": str(port)}
    with serving(argv, tmp_path / "everything.log", b"listening on port", env=env):
        yield f"http://127.0.0.1:{port}/mcp"


async def exercise(manager: McpManager) -> None:
    manager.start(manager.startable())
    await manager.wait_started(60)
    (status,) = manager.statuses()
    assert status.state == "ready", status.reason
    tools = {tool.name: tool for tool in manager.tools()}
    assert {"echo", "get-sum", "get-tiny-image", "get-resource-links"} <= set(tools)
    assert tools["echo"].read_only
    assert not tools["toggle-simulated-logging"].read_only
    assert tools["echo"].qualified == "mcp__every__echo"

    ok, text = result_text(await manager.call("every", "echo", {"message": "over MCP"}), 4096)
    assert ok and text == "Echo: over MCP"
    ok, text = result_text(await manager.call("every", "get-sum", {"a": 2, "b": 40}), 4096)
    assert ok and "42" in text
    ok, text = result_text(await manager.call("every", "get-tiny-image", {}), 4096)
    assert ok and "[image: image/png, " in text and "not shown to the model]" in text
    ok, text = result_text(await manager.call("every", "get-resource-links", {"count": 2}), 4096)
    assert ok and text.count("[resource link: demo://resource/") == 2
    args = {"resourceType": "Text", "resourceId": 1}
    ok, text = result_text(await manager.call("every", "get-resource-reference", args), 4096)
    assert ok and "[resource demo://resource/dynamic/text/1 (text/plain)]" in text


@pytest.fixture
def manager_for(tmp_path: Path) -> Iterator[Any]:
    made: list[McpManager] = []

    def make(entry: dict[str, Any]) -> McpManager:
        home, ws = tmp_path / "home", tmp_path / "ws"
        ws.mkdir(exist_ok=True)
        write_servers(home / "mcp.json", {"every": entry})
        manager = McpManager(ws, home, start_timeout=60)
        made.append(manager)
        return manager

    yield make
    for manager in made:
        manager.close()


async def test_server_everything_over_stdio(manager_for: Any) -> None:
    await exercise(manager_for({"command": str(EVERYTHING), "args": ["stdio"]}))


async def test_server_everything_over_streamable_http(manager_for: Any, http_server: str) -> None:
    entry = {"type": "http", "url": http_server, "headers": {"X-Zcoder-Test": "${NOPE:-yes}"}}
    await exercise(manager_for(entry))
