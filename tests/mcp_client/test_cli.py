"""``zcoder mcp add|list|get|remove|test``, through zcoder's own entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mcp_client.support import BIN, hostile, write_servers
from zcoder.cli import main
from zcoder.mcp.config import McpConfigError, load_mcp_config
from zcoder.mcp.consent import Consent, ConsentBook
from zcoder.mcp.switches import DisabledBook


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("ZCODER_HOME", str(home))
    monkeypatch.chdir(ws)
    return home, ws.resolve()


def test_add_writes_claude_code_shaped_entries_in_each_scope(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    home, ws = places
    time_server = str(BIN / "mcp-server-time")
    assert main(["mcp", "add", "-e", "TZ=UTC", "time", "--", time_server, "--x", "1"]) == 0
    assert main(["mcp", "add", "--transport", "http", "web", "http://127.0.0.1:9/mcp",
                 "-H", "Authorization: Bearer ${TOKEN:-none}"]) == 0  # fmt: skip
    assert main(["mcp", "add", "--scope", "project", "repo", "--", "repo-server"]) == 0
    user = json.loads((home / "mcp.json").read_text())["mcpServers"]
    assert user["time"] == {
        "type": "stdio",
        "command": time_server,
        "args": ["--x", "1"],
        "env": {"TZ": "UTC"},
    }
    assert user["web"] == {
        "type": "http",
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN:-none}"},
    }
    project = json.loads((ws / ".mcp.json").read_text())["mcpServers"]
    assert project["repo"] == {"type": "stdio", "command": "repo-server", "args": []}
    # The user wrote the project entry: that is the user's consent to it, here.
    repo = load_mcp_config(ws, home).servers["repo"]
    assert ConsentBook(home).status(ws, repo) is Consent.GRANTED
    out = capsys.readouterr().out
    assert "Added stdio MCP server 'time'" in out and "Added http MCP server 'web'" in out


def test_get_list_test_and_remove(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, ws = places
    assert main(["mcp", "add", "time", "--", str(BIN / "mcp-server-time")]) == 0
    entry = hostile("mute")
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))
    capsys.readouterr()
    assert main(["mcp", "get", "time"]) == 0
    out = capsys.readouterr().out
    assert "scope: user" in out and "consent: not needed" in out
    assert main(["mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert "time (user):" in out and "✓ ready, 2 tools" in out
    assert "repo (project):" in out and "✗ needs consent" in out
    assert main(["mcp", "test", "time"]) == 0
    out = capsys.readouterr().out
    assert "mcp__time__get_current_time (read-only)" in out
    # Not consented, and no terminal to ask on: not started.
    assert main(["mcp", "test", "repo"]) == 1
    assert "allow it first" in capsys.readouterr().err
    assert main(["mcp", "remove", "time"]) == 0
    assert main(["mcp", "remove", "time"]) == 1
    assert "no MCP server named 'time'" in capsys.readouterr().err


def test_mistakes_are_one_line_and_an_exit_status(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, ws = places
    assert main(["mcp", "add", "bad name", "--", "x"]) == 1
    assert main(["mcp", "add", "ok"]) == 2
    assert main(["mcp", "add", "--transport", "http", "web", "ftp://x"]) == 1
    assert main(["mcp", "add", "-e", "NOEQUALS", "e", "--", "x"]) == 1
    assert main(["mcp", "test", "a__b"]) == 2
    assert main(["mcp", "get", "missing"]) == 1
    (ws / ".mcp.json").write_text("{broken")
    assert main(["mcp", "list"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "'bad name'" in err and "needs a command" in err and "http://" in err
    assert "not valid JSON" in err


def test_test_asks_consent_for_a_project_server_on_a_terminal(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, ws = places
    entry = {"command": str(BIN / "mcp-server-time"), "env": {"TZ": "UTC"}}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))
    questions: list[str] = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)

    def answer_no(question: str) -> str:
        questions.append(question)
        return "n"

    monkeypatch.setattr("builtins.input", answer_no)
    assert main(["mcp", "test", "repo"]) == 1
    (question,) = questions
    assert '"TZ": "UTC"' in question and "Allow it here?" in question
    assert "✗ refused" in capsys.readouterr().out
    repo = load_mcp_config(ws, home).servers["repo"]
    assert ConsentBook(home).status(ws, repo) is Consent.REFUSED
    assert main(["mcp", "reset-project-choices"]) == 0
    monkeypatch.setattr("builtins.input", lambda q: "y")
    assert main(["mcp", "test", "repo"]) == 0
    assert "mcp__repo__get_current_time (read-only)" in capsys.readouterr().out


def test_list_shows_a_server_turned_off_in_this_workspace_and_does_not_start_it(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    home, ws = places
    record = tmp_path / "pids"
    write_servers(home / "mcp.json", {"off": hostile("mute", HOSTILE_PIDS=str(record))})
    DisabledBook(home).set(ws, "off", enabled=False)
    assert main(["mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert "off (user): " in out and " - disabled" in out
    assert not record.exists()  # never started
    DisabledBook(home).set(ws, "off", enabled=True)
    assert DisabledBook(home).disabled(ws) == frozenset()


def test_list_never_says_none_is_configured_when_the_file_has_entries(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27 item 15: a file whose only entry cannot be used is not "no servers"."""
    _, ws = places
    write_servers(ws / ".mcp.json", {"bad name!": {"command": "x"}})
    assert main(["mcp", "list"]) == 1
    said = capsys.readouterr()
    assert "bad name!" in said.err
    assert "No MCP servers configured" not in said.out
    assert "No MCP server can be used: the configuration has the problems above." in said.out
    (ws / ".mcp.json").unlink()
    assert main(["mcp", "list"]) == 0
    assert "No MCP servers configured" in capsys.readouterr().out


def test_an_unusable_disabled_file_turns_nothing_off_and_is_not_overwritten(
    places: tuple[Path, Path],
) -> None:
    home, ws = places
    home.mkdir()
    (home / "mcp-disabled.json").write_text("[not json")
    book = DisabledBook(home)
    assert book.disabled(ws) == frozenset()
    assert book.problem is not None and "is unusable" in book.problem
    with pytest.raises(McpConfigError, match="fix or remove it first"):
        book.set(ws, "any", enabled=False)
    assert (home / "mcp-disabled.json").read_text() == "[not json"


def test_the_consent_question_names_the_variables_and_list_says_what_is_replaced(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27, item 7: ``zcoder mcp test`` asks about a project server naming the
    variables of the environment it would be given (never their values), and ``zcoder mcp
    list`` says that a project server replaces the user's server of the same name."""
    home, ws = places
    monkeypatch.setenv("SECRET_TOKEN", "s3cr3t-value")
    repo_entry = {"command": "repo-server", "env": {"TOKEN": "${SECRET_TOKEN}"}}
    write_servers(ws / ".mcp.json", {"time": repo_entry})
    write_servers(home / "mcp.json", {"time": {"command": str(BIN / "mcp-server-time")}})
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    asked: list[str] = []

    def answer(text: str) -> str:
        asked.append(text)
        return "n"

    monkeypatch.setattr("builtins.input", answer)
    assert main(["mcp", "test", "time"]) == 1
    out = capsys.readouterr().out
    assert "It is given these variables of your environment, filled in: SECRET_TOKEN (set)" in out
    assert "It replaces your own server of that name: " + str(BIN / "mcp-server-time") in out
    assert "s3cr3t-value" not in out + "".join(asked)
    assert main(["mcp", "list"]) == 0
    err = capsys.readouterr().err
    assert f"note: the project's {ws / '.mcp.json'} names a server 'time'" in err
    assert "the project's is used" in err
