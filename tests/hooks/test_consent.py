"""The user's one-time consent to a project's hooks, and the book it shares with MCP servers.

Attack tests: a repository's ``.zcoder/settings.json`` names hooks; none of them runs until
the user allows it (a marker file each would create stays absent), and an entry changed
after the yes asks again. Every hook is a real program.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.hooks.support import (
    ScriptedUser,
    entry,
    marker_script,
    project_settings,
    write_settings,
)
from zcoder.base.consent import Consent, ConsentFile, digest_of
from zcoder.hooks import HookCommand, HookConsent, HookEngine, engine_for
from zcoder.hooks.cli import main as hooks_main
from zcoder.hooks.consent import CONSENT_FILE, dialog_asker
from zcoder.mcp.config import load_mcp_config
from zcoder.mcp.consent import ConsentBook
from zcoder.tools.approval import ApprovalDecision
from zcoder.tools.profiles import Profile


def plant(workspace: Path, marker: Path, *, timeout: float | None = None) -> str:
    """The repository's hook: a UserPromptSubmit program that creates ``marker``."""
    command = marker_script(workspace.parent, "planted", marker)
    write_settings(project_settings(workspace), {"UserPromptSubmit": entry(command, "", timeout)})
    return command


def engine_of(home: Path, workspace: Path) -> HookEngine:
    engine, problems = engine_for(home, workspace)
    assert engine is not None and not problems
    return engine


def planted_command(home: Path, workspace: Path) -> HookCommand:
    """The one hook the repository planted, as zcoder read it."""
    (command,) = engine_of(home, workspace).hooks.project_commands()
    return command


def asking_engine(home: Path, workspace: Path, user: ScriptedUser) -> HookEngine:
    engine = engine_of(home, workspace)
    engine.ask = dialog_asker(user, HookConsent(home, workspace), Profile.CODING)
    return engine


async def test_a_project_hook_without_consent_never_runs(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    plant(workspace, marker)
    # Nobody to ask (--prompt, --acp): it is skipped.
    outcome = await engine_of(home, workspace).user_prompt_submit("hello")
    assert outcome.ran == 0 and len(outcome.skipped) == 1
    assert not marker.exists()


async def test_refused_in_the_dialog_it_never_runs_and_is_listed(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    command = plant(workspace, marker)
    user = ScriptedUser(ApprovalDecision.DENY)
    outcome = await asking_engine(home, workspace, user).user_prompt_submit("hello")
    assert not marker.exists() and outcome.ran == 0
    (request,) = user.asked
    assert command in request.command and "UserPromptSubmit" in request.command
    assert str(project_settings(workspace)) in (request.warning or "")
    assert any("refused" in m and command in m for m in outcome.messages)
    # The no is kept: a later session does not ask again, and still does not run it.
    again = ScriptedUser()
    await asking_engine(home, workspace, again).user_prompt_submit("hello")
    assert again.asked == [] and not marker.exists()


async def test_a_changed_entry_asks_again(home: Path, workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    plant(workspace, marker)
    yes = ScriptedUser(ApprovalDecision.ONCE)
    await asking_engine(home, workspace, yes).user_prompt_submit("hello")
    assert len(yes.asked) == 1 and marker.read_text() == "UserPromptSubmit"
    marker.unlink()
    # The repository changes the entry (a longer deadline is a change too).
    plant(workspace, marker, timeout=5)
    unasked_run = await engine_of(home, workspace).user_prompt_submit("hello")
    assert unasked_run.ran == 0 and not marker.exists()
    no = ScriptedUser(ApprovalDecision.DENY)
    await asking_engine(home, workspace, no).user_prompt_submit("hello")
    assert len(no.asked) == 1 and "at most 5 s" in no.asked[0].command
    assert not marker.exists()


async def test_the_dialog_is_shown_once_a_process(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    plant(workspace, tmp_path / "ran")
    user = ScriptedUser(ApprovalDecision.DENY)
    engine = asking_engine(home, workspace, user)
    for _ in range(3):
        await engine.user_prompt_submit("hello")
    assert len(user.asked) == 1


def test_the_answers_file_is_private_and_per_workspace(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    plant(workspace, tmp_path / "ran")
    command = planted_command(home, workspace)
    book = HookConsent(home, workspace)
    assert book.status(command) is Consent.UNASKED
    assert book.record([command], Consent.GRANTED) == 1
    assert book.status(command) is Consent.GRANTED
    assert HookConsent(home, tmp_path).status(command) is Consent.UNASKED
    assert stat.S_IMODE((home / CONSENT_FILE).stat().st_mode) == 0o600


def test_a_consent_file_planted_by_a_link_grants_nothing(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    plant(workspace, tmp_path / "ran")
    command = planted_command(home, workspace)
    planted = tmp_path / "planted.json"
    table = {str(workspace): {command.key: {"hash": command.digest, "decision": "granted"}}}
    planted.write_text(json.dumps({"version": 1, "workspaces": table}))
    home.mkdir()
    os.symlink(planted, home / CONSENT_FILE)
    book = HookConsent(home, workspace)
    assert book.status(command) is Consent.UNASKED
    assert book.file.problem is not None and "unusable" in book.file.problem


def test_mcp_answers_given_before_stay_in_their_file_and_format(
    home: Path, workspace: Path
) -> None:
    """A user's earlier yes to a project server (the file as zcoder wrote it before the
    book was shared) still counts, and the file keeps that shape."""
    raw = {"command": "tool", "args": ["--safe"]}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": raw}}))
    home.mkdir()
    earlier = {
        "version": 1,
        "workspaces": {str(workspace): {"repo": {"hash": digest_of(raw), "decision": "granted"}}},
    }
    (home / "mcp-consent.json").write_text(json.dumps(earlier))
    repo = load_mcp_config(workspace, home).servers["repo"]
    book = ConsentBook(home)
    assert book.status(workspace, repo) is Consent.GRANTED
    book.record(workspace, repo, Consent.REFUSED)
    saved = json.loads((home / "mcp-consent.json").read_text())
    assert saved["workspaces"][str(workspace)]["repo"]["decision"] == "refused"
    assert not (home / CONSENT_FILE).exists()  # the hooks' answers are kept apart


def test_one_book_serves_both_kinds(home: Path, workspace: Path) -> None:
    servers = ConsentFile(home, "mcp-consent.json", what="project servers")
    hooks = ConsentFile(home, CONSENT_FILE, what="project hooks")
    servers.record(workspace, "same-key", "d1", Consent.GRANTED)
    assert hooks.status(workspace, "same-key", "d1") is Consent.UNASKED
    assert servers.status(workspace, "same-key", "d2") is Consent.UNASKED


def test_the_command_line_lists_trusts_and_resets(
    home: Path,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ZCODER_HOME", str(home))
    command = plant(workspace, tmp_path / "ran")
    assert hooks_main(["-w", str(workspace), "list"]) == 0
    listed = capsys.readouterr().out
    assert command in listed and "(project, not yet asked)" in listed
    assert hooks_main(["-w", str(workspace), "trust"]) == 0
    assert command in capsys.readouterr().out
    hooks_main(["-w", str(workspace), "list"])
    assert "(project, granted)" in capsys.readouterr().out
    assert hooks_main(["-w", str(workspace), "reset"]) == 0
    assert "Forgot 1 answer" in capsys.readouterr().out
    hooks_main(["-w", str(workspace), "refuse"])
    hooks_main(["-w", str(workspace), "list"])
    assert "(project, refused)" in capsys.readouterr().out


async def test_trusted_from_the_shell_it_runs_without_a_person(
    home: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZCODER_HOME", str(home))
    marker = tmp_path / "ran"
    plant(workspace, marker)
    assert hooks_main(["-w", str(workspace), "trust"]) == 0
    outcome = await engine_of(home, workspace).user_prompt_submit("hello")
    assert outcome.ran == 1 and marker.read_text() == "UserPromptSubmit"
