"""The manager against real MCP servers (mcp-server-time, mcp-server-git from PyPI) and
against hostile ones of our own (tests/fixtures/mcp_hostile.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_client.support import (
    BIN,
    REPO,
    alive,
    free_port,
    hostile,
    pids,
    serving,
    time_server,
    tracing_memory,
    wait_for,
    write_servers,
)
from zcoder.mcp.connection import McpCallError
from zcoder.mcp.manager import McpManager
from zcoder.mcp.results import result_text


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Any]:
    """A manager for the given user servers (no consent needed), closed at the end."""
    made: list[McpManager] = []

    def factory(servers: dict[str, Any], **options: Any) -> McpManager:
        home, ws = tmp_path / "home", tmp_path / "ws"
        ws.mkdir(exist_ok=True)
        write_servers(home / "mcp.json", servers)
        manager = McpManager(ws, home, **options)
        made.append(manager)
        return manager

    yield factory
    for manager in made:
        manager.close()


async def start(manager: McpManager, timeout: float = 60) -> None:
    manager.start(manager.startable())
    await manager.wait_started(timeout)


async def test_mcp_server_time_lists_read_only_tools_and_answers(make: Any) -> None:
    manager = make({"time": time_server()})
    await start(manager)
    tools = {tool.qualified: tool for tool in manager.tools()}
    assert set(tools) == {"mcp__time__get_current_time", "mcp__time__convert_time"}
    assert all(tool.read_only for tool in tools.values())
    result = await manager.call("time", "get_current_time", {"timezone": "Asia/Tokyo"})
    ok, text = result_text(result, 32768)
    assert ok and '"timezone": "Asia/Tokyo"' in text
    ok, text = result_text(
        await manager.call("time", "get_current_time", {"timezone": "No/Where"}), 32768
    )
    assert not ok and text.startswith("Error: the tool reported an error") and "No/Where" in text


async def test_mcp_server_git_reads_a_real_repository(make: Any, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "hello.txt").write_text("hello\n")
    subprocess.run([*git, "add", "hello.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "first commit here"], check=True)
    (repo / "new.txt").write_text("new\n")
    manager = make(
        {"git": {"command": str(BIN / "mcp-server-git"), "args": ["--repository", str(repo)]}}
    )
    await start(manager)
    names = {tool.name for tool in manager.tools()}
    assert {"git_status", "git_log"} <= names
    ok, text = result_text(await manager.call("git", "git_status", {"repo_path": str(repo)}), 32768)
    assert ok and "new.txt" in text
    ok, text = result_text(await manager.call("git", "git_log", {"repo_path": str(repo)}), 32768)
    assert ok and "first commit here" in text


async def test_a_server_that_never_answers_a_call_times_out(make: Any) -> None:
    manager = make({"hostile": hostile("silent")}, call_timeout=1.0)
    await start(manager)
    with pytest.raises(McpCallError, match=r"did not answer within 1 s"):
        await manager.call("hostile", "wait", {})


async def test_a_server_that_never_starts_fails_with_its_deadline(make: Any) -> None:
    manager = make({"mute": hostile("mute")}, start_timeout=1.0)
    await start(manager, timeout=30)
    (status,) = manager.statuses()
    assert status.state == "failed"
    assert "did not start within 1 s" in status.reason
    assert manager.tools() == []
    assert manager.news() == ["MCP server 'mute' failed: " + status.reason]
    assert manager.news() == []  # told once


async def test_a_missing_command_or_variable_is_a_failure_with_its_reason(make: Any) -> None:
    manager = make(
        {
            "gone": {"command": "no-such-mcp-server-anywhere"},
            "token": {"command": sys.executable, "env": {"T": "${ZCODER_TEST_UNSET_VAR}"}},
        }
    )
    await start(manager)
    reasons = {status.entry.name: status.reason for status in manager.statuses()}
    assert "'no-such-mcp-server-anywhere' was not found" in reasons["gone"]
    assert "${ZCODER_TEST_UNSET_VAR} is not set" in reasons["token"]


async def test_a_100_mb_result_is_dropped_with_a_reason_and_memory_stays_bounded(
    make: Any,
) -> None:
    manager = make({"hostile": hostile("huge")}, max_message=1024 * 1024)
    await start(manager)
    with (
        tracing_memory() as traced,
        pytest.raises(McpCallError, match=r"over zcoder's limit of 1048576 bytes"),
    ):
        await manager.call("hostile", "flood", {})
    # 100 MB went through; what was held at once stayed near the 1 MB limit.
    assert traced.peak < 16 * 1024 * 1024
    assert manager._connections["hostile"].process.dropped == 1
    # The server is still usable after the dropped reply.
    assert manager.tools()


async def test_a_100_mb_http_response_is_dropped_with_a_reason_and_memory_stays_bounded(
    make: Any, tmp_path: Path
) -> None:
    port = free_port()
    argv = [sys.executable, "-m", "tests.fixtures.mcp_hostile", "huge", str(port)]
    with serving(argv, tmp_path / "server.log", b"Uvicorn running", cwd=REPO):
        manager = make(
            {"huge": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}},
            max_message=1024 * 1024,
        )
        await start(manager)
        assert manager.statuses()[0].state == "ready", manager.statuses()[0].reason
        with (
            tracing_memory() as traced,
            pytest.raises(McpCallError, match=r"passed zcoder's limit of 1048576 bytes"),
        ):
            await manager.call("huge", "flood", {})
        assert traced.peak < 16 * 1024 * 1024


async def test_images_audio_and_resources_are_described_and_errors_are_errors(
    make: Any,
) -> None:
    manager = make({"media": hostile("media")})
    await start(manager)
    assert {tool.name for tool in manager.tools()} == {"picture", "broken"}
    assert manager.news() == [
        "MCP server 'media' is ready: 2 tools; left out, their names being unusable as tool "
        "names: 'dotted.name'"
    ]
    ok, text = result_text(await manager.call("media", "picture", {}), 32768)
    assert ok
    assert "here it is" in text
    assert "[image: image/png, 12 KB — not shown to the model]" in text
    assert "[audio: audio/wav, 2 KB — not shown to the model]" in text
    assert "[resource file:///data.bin: application/octet-stream, 100 bytes" in text
    assert "[resource link: file:///elsewhere.txt (elsewhere, text/plain) — not read]" in text
    ok, text = result_text(await manager.call("media", "broken", {}), 32768)
    assert not ok and "the broken tool broke" in text


async def test_a_changed_tool_list_is_listed_again(make: Any) -> None:
    manager = make({"growing": hostile("growing")})
    await start(manager)
    assert [tool.name for tool in manager.tools()] == ["grow"]
    ok, text = result_text(await manager.call("growing", "grow", {}), 4096)
    assert ok and text == "grew"
    wait_for(lambda: len(manager.tools()) == 2, what="the new tool list")
    assert [tool.qualified for tool in manager.tools()] == [
        "mcp__growing__grow",
        "mcp__growing__grown",
    ]
    ok, text = result_text(await manager.call("growing", "grown", {}), 4096)
    assert ok and text == "grown here"


async def test_a_server_that_dies_is_reported_with_its_last_words(make: Any) -> None:
    manager = make({"dying": hostile("dying")})
    await start(manager)
    with pytest.raises(McpCallError):
        await manager.call("dying", "crash", {})
    wait_for(lambda: manager.statuses()[0].state == "failed", what="the failed state")
    assert "crashing on purpose" in manager.statuses()[0].reason
    assert manager.tools() == []
    with pytest.raises(McpCallError, match="failed"):
        await manager.call("dying", "crash", {})


async def test_close_leaves_no_server_process_behind(make: Any, tmp_path: Path) -> None:
    record = tmp_path / "pids"
    manager = make(
        {
            "silent": hostile("silent", HOSTILE_PIDS=str(record)),
            "mute": hostile("mute", HOSTILE_PIDS=str(record)),
            "time": time_server(),
        },
        start_timeout=120,
        call_timeout=30,
    )
    manager.start(manager.startable())
    wait_for(lambda: len(pids(record)) == 2, what="both hostile servers to run")
    wait_for(lambda: len(manager.tools()) == 4, 60, "silent and time to be ready")
    started = [c.process.pid for c in manager._connections.values()]
    assert all(started)
    assert manager.statuses()[1].state == "starting"  # mute: closed in the middle of its start
    hung = asyncio.create_task(manager.call("silent", "wait", {}))
    await asyncio.sleep(0.5)  # let the call reach the server (it answers nothing either way)
    await asyncio.to_thread(manager.close)
    with pytest.raises(McpCallError):
        await hung
    for pid in [*pids(record), *started]:
        assert not alive(pid), f"server process {pid} outlived close()"
