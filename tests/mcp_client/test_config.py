"""MCP configuration files and the consent to project servers."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.mcp_client.support import write_servers
from zcoder.mcp.config import (
    McpConfigError,
    check_server_name,
    expand,
    load_mcp_config,
    remove_server,
    save_server,
)
from zcoder.mcp.consent import Consent, ConsentBook


def test_both_files_load_and_the_project_entry_wins(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    write_servers(home / "mcp.json", {"a": {"command": "one"}, "b": {"url": "http://x/mcp"}})
    write_servers(ws / ".mcp.json", {"a": {"type": "stdio", "command": "two", "args": ["-v"]}})
    config = load_mcp_config(ws, home)
    assert config.problems == []
    assert config.servers["a"].scope == "project"
    assert config.servers["a"].describe() == "two -v"
    assert config.servers["b"].transport == "http"
    assert config.servers["b"].scope == "user"


def test_bad_entries_are_problems_naming_file_and_server(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_servers(
        ws / ".mcp.json",
        {
            "good": {"command": "ok"},
            "no_command": {"type": "stdio"},
            "bad__name": {"command": "x"},
            "typo": {"command": "x", "argz": []},
            "web": {"type": "http", "url": "ftp://nope"},
            "args": {"command": "x", "args": "not a list"},
        },
    )
    config = load_mcp_config(ws, None)
    assert list(config.servers) == ["good"]
    assert len(config.problems) == 5
    for problem in config.problems:
        assert str(ws / ".mcp.json") in problem
    joined = "\n".join(config.problems)
    assert "'no_command'" in joined and "needs a command" in joined
    assert "'__'" in joined
    assert "unknown key for a stdio server: argz" in joined
    assert "http://" in joined
    assert "list of strings" in joined


def test_an_unreadable_file_is_one_problem_not_a_traceback(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text("{ not json")
    config = load_mcp_config(ws, None)
    assert config.servers == {}
    assert len(config.problems) == 1 and "not valid JSON" in config.problems[0]
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": []}))
    assert "must be an object" in load_mcp_config(ws, None).problems[0]


@pytest.mark.parametrize("name", ["", "-x", "a b", "a.b", "x" * 41, "a__b", "é"])
def test_server_names_that_cannot_be_tool_name_parts_are_refused(name: str) -> None:
    assert check_server_name(name) is not None


def test_variables_expand_with_defaults_and_unset_ones_are_errors() -> None:
    env = {"TOKEN": "s3cret", "EMPTY": ""}
    assert expand("Bearer ${TOKEN}", env) == "Bearer s3cret"
    assert expand("${MISSING:-fallback}/${EMPTY:-x}", env) == "fallback/x"
    assert expand("${MISSING:-}", env) == ""
    with pytest.raises(McpConfigError, match=r"\$\{MISSING\} is not set"):
        expand("${MISSING}", env)


def test_save_and_remove_keep_the_rest_of_the_file(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"other": 1, "mcpServers": {"x": {"command": "x"}}}))
    save_server("y", {"command": "y"}, scope="project", workspace=ws, home=home)
    data = json.loads((ws / ".mcp.json").read_text())
    assert data["other"] == 1 and set(data["mcpServers"]) == {"x", "y"}
    save_server("u", {"type": "http", "url": "http://h/mcp"}, scope="user", workspace=ws, home=home)
    assert stat.S_IMODE((home / "mcp.json").stat().st_mode) == 0o600
    assert remove_server("x", scope="project", workspace=ws, home=home)
    assert not remove_server("x", scope="project", workspace=ws, home=home)
    assert set(json.loads((ws / ".mcp.json").read_text())["mcpServers"]) == {"y"}
    with pytest.raises(McpConfigError):
        save_server("bad name", {"command": "y"}, scope="user", workspace=ws, home=home)


def test_consent_is_per_workspace_and_per_entry_content(tmp_path: Path) -> None:
    home, ws, other = tmp_path / "home", tmp_path / "ws", tmp_path / "other"
    write_servers(home / "mcp.json", {"mine": {"command": "mine"}})
    write_servers(ws / ".mcp.json", {"repo": {"command": "tool", "args": ["--safe"]}})
    book = ConsentBook(home)
    config = load_mcp_config(ws, home)
    mine, repo = config.servers["mine"], config.servers["repo"]
    assert book.status(ws, mine) is Consent.NOT_NEEDED
    assert book.status(ws, repo) is Consent.UNASKED
    book.record(ws, repo, Consent.GRANTED)
    assert book.status(ws, repo) is Consent.GRANTED
    assert book.status(other, repo) is Consent.UNASKED  # another workspace asks again
    assert stat.S_IMODE((home / "mcp-consent.json").stat().st_mode) == 0o600
    # The same name with another command is another entry: asked again.
    write_servers(ws / ".mcp.json", {"repo": {"command": "tool", "args": ["--unsafe"]}})
    changed = load_mcp_config(ws, home).servers["repo"]
    assert book.status(ws, changed) is Consent.UNASKED
    book.record(ws, changed, Consent.REFUSED)
    assert book.status(ws, changed) is Consent.REFUSED
    assert book.forget_workspace(ws) == 1
    assert book.status(ws, changed) is Consent.UNASKED


def test_a_consent_file_of_another_shape_grants_nothing(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    write_servers(ws / ".mcp.json", {"repo": {"command": "tool"}})
    home.mkdir()
    (home / "mcp-consent.json").write_text(json.dumps({"workspaces": {str(ws): {"repo": "yes"}}}))
    repo = load_mcp_config(ws, home).servers["repo"]
    assert ConsentBook(home).status(ws, repo) is Consent.UNASKED
