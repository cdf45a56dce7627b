"""The board through ``zcoder mcp serve``, driven by the official MCP SDK's client, as
Claude Code or Codex would: add, claim, complete; a claim held by the server process ends
with it (SIGKILL included), and a claim another process holds is refused."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
from mcp.shared.exceptions import MCPError

from tests.board.support import child_env, git_repo, wait_for
from tests.fixtures.mcp_serve import call, serving
from tests.fixtures.processes import pid_alive
from zcoder.board import Board, Claimant, State

BOARD_TOOLS = ["task_add", "task_claim", "task_list", "task_update"]


def env_for(home: Path, tmp_path: Path) -> dict[str, str]:
    env = child_env(home)
    relay = tmp_path / "relay"
    relay.mkdir(mode=0o700, exist_ok=True)
    env["ZCODER_RELAY_DIR"] = str(relay)
    return env


async def test_a_client_adds_claims_and_completes_a_task(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    async with serving(env_for(home, tmp_path), repo, client="claude-code") as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert sorted(set(tools) & set(BOARD_TOOLS)) == BOARD_TOOLS
        assert tools["task_list"].annotations is not None
        assert tools["task_list"].annotations.read_only_hint is True
        assert tools["task_claim"].annotations is not None
        assert tools["task_claim"].annotations.read_only_hint is False
        text, error = await call(session, "task_add", title="port the parser")
        assert not error and text == "Added #1 open: port the parser"
        text, error = await call(session, "task_add", title="test it", after=[1])
        assert not error
        text, error = await call(session, "task_claim", id=2)
        assert error and "waits on #1" in text
        text, error = await call(session, "task_claim")
        assert not error and text.startswith("Claimed #1 claimed by claude-code")
        board = Board.for_workspace(home, repo)
        assert board.task(1).state is State.CLAIMED  # held by the server process
        text, error = await call(session, "task_update", id=1, state="done", note="ported")
        assert not error and text == "Now #1 done by claude-code: port the parser"
        listed, error = await call(session, "task_list")
        assert not error and "#1 done by claude-code" in listed and "#2 open" in listed
        detail, _ = await call(session, "task_list", id=1)
        assert "ported" in detail
        text, error = await call(session, "task_update", id=99, state="done")
        assert error and "no task #99" in text
    [first, second] = Board.for_workspace(home, repo).tasks()
    assert (first.state, second.state) == (State.DONE, State.OPEN)


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` is only the client seeing its server vanish."""
    if isinstance(exc, BaseExceptionGroup):
        return all(connection_lost(inner) for inner in exc.exceptions)
    return isinstance(exc, MCPError | OSError | anyio.BrokenResourceError)


async def test_a_killed_server_frees_the_claims_its_client_made(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    board = Board.for_workspace(home, repo)
    board.add("taken by a client that crashes", author="t")
    pid = 0
    try:
        async with serving(env_for(home, tmp_path), repo, client="codex") as session:
            text, error = await call(session, "task_claim", id=1)
            assert not error, text
            assert board.task(1).claimant == "codex"
            pid = int(str(board.task(1).pid))
            os.kill(pid, signal.SIGKILL)  # the server, not the client: no goodbye
    except BaseException as exc:
        if not connection_lost(exc):
            raise
    assert pid
    # The server's threads end a moment after its main one shows as a zombie: wait for
    # the claim to be free, with a deadline (bench/board_bench.py times it).
    wait_for(lambda: board.task(1).claimable, "the claim to end with the server")
    assert not pid_alive(pid)
    claim = board.claim(1, Claimant.this_process("next"))
    assert claim.task.claimant == "next"
    assert "ended with its process" in claim.task.notes[-1].text
