"""``zcoder --prompt`` ends the MCP servers it started when its run ends: a real stdio
server (tests/fixtures/mcp_hostile.py, which records its pid) is gone once run_prompt
returns, in a process that goes on (nothing waits for the interpreter's exit), and after
the one-shot process exited."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.mcp_client.support import alive, hostile, pids, write_servers
from tests.test_oneshot import Env, make_env, prompt
from zcoder.config import load_config
from zcoder.oneshot import run as oneshot


def with_user_server(tmp_path: Path) -> tuple[Env, Path]:
    """A private environment whose user-scope server (no consent asked) records its pid."""
    env = make_env(tmp_path)
    record = tmp_path / "pids"
    write_servers(env.home / "mcp.json", {"probe": hostile("silent", HOSTILE_PIDS=str(record))})
    return env, record


def test_run_prompt_closes_its_mcp_servers_when_it_returns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env, record = with_user_server(tmp_path)
    with FakeOllama() as fake:
        fake.enqueue(Turn.text("done"))
        config = load_config(env.vars, host=f"127.0.0.1:{fake.port}", workspace=str(env.workspace))
        assert oneshot.run_prompt(config, "hello") == 0, capsys.readouterr().err
        [body] = fake.chat_bodies
    assert "mcp__probe__wait" in {tool["function"]["name"] for tool in body["tools"]}
    [pid] = pids(record)
    assert not alive(pid), "the MCP server outlived the one-shot run"


def test_no_mcp_server_outlives_the_one_shot_process(tmp_path: Path) -> None:
    env, record = with_user_server(tmp_path)
    with FakeOllama() as fake:
        fake.enqueue(Turn.text("done"))
        done = prompt(env, fake, "hello")
    assert done.returncode == 0, done.stderr
    [pid] = pids(record)
    assert not alive(pid)
