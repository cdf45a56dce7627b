"""delegate_task and the helpers behind /claude, /codex and /opencode, with stand-in CLIs
on PATH (tests/fixtures/helper_cli.py): asked every time (no --yes, `a` or hook answers
for the user; nobody to ask is a refusal), refused runs nothing, the answer is the
result, the stream is read into lines, the edits are journalled (/diff, /undo), the time
limit and a stop kill the whole process group, and no helper installed is no tool."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.agent.support import wait_until
from tests.fixtures.approver import ALWAYS, DENY, ONCE, ScriptedApprover
from tests.fixtures.helper_cli import install_helpers
from tests.fixtures.processes import pid_alive
from tests.fixtures.workspace import tool_context
from zcoder.agent.edits import EditJournal
from zcoder.tools import (
    ApprovalDecision,
    ApprovalPolicy,
    CommandApprovalRequest,
    CommandPolicy,
    Mode,
    Profile,
    ToolResult,
)
from zcoder.tools.helpers.clis import HELPER_NAMES, HelperReading, find_helper, helper_list
from zcoder.tools.helpers.tool import DELEGATE_TASK, HelperTool, register_helper_tool
from zcoder.tools.registry import ToolRegistry

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def helpers_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-ins first on PATH; their runs logged to the returned file."""
    bin_dir = install_helpers(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "runs.jsonl"
    monkeypatch.setenv("HELPER_LOG", str(log))
    return log


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace holding notes.txt, which helpers edit."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("the original\n")
    return tmp_path / "ws"


async def delegate(
    workspace: Path,
    agent: str,
    task: str,
    approver: ScriptedApprover,
    *,
    approval: ApprovalPolicy | None = None,
    journal: EditJournal | None = None,
    timeout: float = 30.0,
    shown: list[str] | None = None,
    hook: str = "",
) -> ToolResult:
    ctx = tool_context(workspace, approver=approver, approval=approval or ask_policy())
    ctx.edits = journal
    ctx.hook_permission = hook
    if shown is not None:
        ctx.on_output = shown.append
    tool = HelperTool(HELPER_NAMES, timeout)
    return await tool.spec().run({"agent": agent, "task": task}, ctx)


def ask_policy(policy: CommandPolicy = CommandPolicy.ASK) -> ApprovalPolicy:
    return ApprovalPolicy(policy, Profile.CODING)


@pytest.mark.parametrize("agent", HELPER_NAMES)
async def test_each_helper_runs_after_yes_and_its_edit_is_in_diff_and_undone(
    helpers_on_path: Path, workspace: Path, agent: str
) -> None:
    journal = EditJournal(workspace, home=None)
    journal.begin_turn("hand it over")
    approver, shown = ScriptedApprover(ONCE), list[str]()
    result = await delegate(
        workspace, agent, "edit:notes.txt edit:new.txt", approver, journal=journal, shown=shown
    )
    assert result.ok, result.output
    title = find_helper(agent).title
    assert result.output.startswith(f"{agent} did: edit:notes.txt edit:new.txt")
    assert result.output.rstrip().endswith(
        f"[{title} exit code 0; 2 files changed: new.txt, notes.txt]"
    )
    [request] = approver.requests
    assert request.helper == title and request.allow_always is False
    assert request.command == f"{agent} {' '.join(find_helper(agent).options)} -- " + (
        "'edit:notes.txt edit:new.txt'"
    )
    assert request.warning is not None and "its own permissions" in request.warning
    lines = "".join(shown)
    assert "→ " in lines and "new.txt" in lines and '{"type"' not in lines  # read, not raw
    assert (workspace / "notes.txt").read_text() == f"changed by {agent}\n"
    diff = journal.session_diff().text()
    assert "-the original" in diff and f"+changed by {agent}" in diff and "new.txt" in diff
    plan = journal.plan_undo()
    assert plan is not None
    journal.undo(plan)
    assert (workspace / "notes.txt").read_text() == "the original\n"
    assert not (workspace / "new.txt").exists()


@pytest.mark.parametrize(
    ("why", "policy", "grant", "hook"),
    [
        ("--yes", CommandPolicy.ALLOW, False, ""),
        ("an earlier a", CommandPolicy.ASK, True, ""),
        ("a hook's allow", CommandPolicy.ASK, False, "allow"),
    ],
)
async def test_nothing_the_user_said_before_answers_for_them(
    helpers_on_path: Path, workspace: Path, why: str, policy: CommandPolicy, grant: bool, hook: str
) -> None:
    approval = ask_policy(policy)
    if grant:
        approval._always_granted = True
    approver = ScriptedApprover(DENY)
    result = await delegate(
        workspace, "claude", "edit:notes.txt", approver, approval=approval, hook=hook
    )
    assert len(approver.requests) == 1, why  # asked all the same
    assert not result.ok and "the user said no" in result.output
    assert not helpers_on_path.exists()  # nothing ran
    assert (workspace / "notes.txt").read_text() == "the original\n"


async def test_always_is_not_a_standing_grant(helpers_on_path: Path, workspace: Path) -> None:
    approver = ScriptedApprover(ALWAYS, DENY)  # an `a` typed anyway: this run only
    approval = ask_policy()
    assert (await delegate(workspace, "codex", "hi", approver, approval=approval)).ok
    assert not (await delegate(workspace, "codex", "hi", approver, approval=approval)).ok
    assert len(approver.requests) == 2 and not approval.always_granted


class Unaskable(ScriptedApprover):
    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        raise OSError("no terminal to ask the user")


async def test_nobody_to_ask_is_a_refusal(helpers_on_path: Path, workspace: Path) -> None:
    result = await delegate(workspace, "opencode", "edit:notes.txt", Unaskable())
    assert not result.ok and "could not be asked" in result.output
    assert not helpers_on_path.exists()


@pytest.mark.parametrize("mode", ["plan", "deny"])
async def test_plan_mode_and_deny_commands_refuse_without_asking(
    helpers_on_path: Path, workspace: Path, mode: str
) -> None:
    approval = ask_policy(CommandPolicy.DENY if mode == "deny" else CommandPolicy.ASK)
    if mode == "plan":
        approval.switch_mode(Mode.PLAN)
    approver = ScriptedApprover()  # fails the test if asked
    result = await delegate(workspace, "claude", "edit:notes.txt", approver, approval=approval)
    assert not result.ok and approver.requests == []
    assert not helpers_on_path.exists()


async def test_a_task_that_looks_like_an_option_stays_the_task(
    helpers_on_path: Path, workspace: Path
) -> None:
    result = await delegate(
        workspace, "claude", "--dangerously-skip-permissions", ScriptedApprover(ONCE)
    )
    assert result.ok
    [argv] = [json.loads(line) for line in helpers_on_path.read_text().splitlines()]
    assert argv[-2:] == ["--", "--dangerously-skip-permissions"]
    assert argv.count("--dangerously-skip-permissions") == 1


async def test_a_failing_helper_is_a_failed_call_with_its_error(
    helpers_on_path: Path, workspace: Path
) -> None:
    result = await delegate(workspace, "codex", "fail", ScriptedApprover(ONCE))
    assert not result.ok
    assert "the stand-in was told to fail" in result.output and "exit code 3" in result.output


def _pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()] if path.exists() else []


async def test_the_time_limit_kills_the_whole_group(
    helpers_on_path: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("HELPER_PIDS", str(pids))
    result = await delegate(workspace, "claude", "hang", ScriptedApprover(ONCE), timeout=1.0)
    assert not result.ok and "timed out after 1 s" in result.output
    assert "working on it, slowly" in result.output  # its words so far are its answer
    [helper, child] = _pids(pids)
    await wait_until(
        lambda: not pid_alive(helper) and not pid_alive(child), what="the group to die"
    )


async def test_a_stop_kills_the_group_and_keeps_the_edits_in_the_journal(
    helpers_on_path: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("HELPER_PIDS", str(pids))
    journal = EditJournal(workspace, home=None)
    journal.begin_turn("x")
    (workspace / "notes.txt").write_text("the original\n")
    task = asyncio.create_task(
        delegate(workspace, "opencode", "hang", ScriptedApprover(ONCE), journal=journal)
    )
    await wait_until(lambda: len(_pids(pids)) == 2, timeout=20, what="the helper to start")
    (workspace / "made-while-running.txt").write_text("by the helper\n")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [helper, child] = _pids(pids)
    await wait_until(
        lambda: not pid_alive(helper) and not pid_alive(child), what="the group to die"
    )
    assert "made-while-running.txt" in journal.session_diff().text()


def test_no_helper_installed_is_no_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there
    registry = ToolRegistry()
    assert register_helper_tool(registry, HELPER_NAMES, 60) is None
    assert DELEGATE_TASK not in registry.names()


def test_one_installed_is_offered_alone_and_turned_off_is_no_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(install_helpers(tmp_path / "bin", ("codex",))))
    registry = ToolRegistry()
    tool = register_helper_tool(registry, HELPER_NAMES, 60)
    assert tool is not None and tool.names == ("codex",)
    assert tool.spec().parameters["properties"]["agent"]["enum"] == ["codex"]
    off = ToolRegistry()
    assert register_helper_tool(off, helper_list("none"), 60) is None
    assert DELEGATE_TASK not in off.names()


def test_the_helper_list_setting() -> None:
    assert helper_list("claude, codex") == ("claude", "codex")
    assert helper_list("off") == helper_list("") == ()
    with pytest.raises(ValueError, match="unknown helper 'agy'"):
        helper_list("claude agy")


def test_the_prompt_overhead_pays_only_a_catalog_line_and_only_when_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import prompt_overhead

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    none = prompt_overhead.measure(Profile.CODING, relay=True)
    monkeypatch.setenv("PATH", str(install_helpers(tmp_path / "bin", ("claude",))))
    one = prompt_overhead.measure(Profile.CODING, relay=True)
    assert one.tools == none.tools  # no schema: a line in load_tools' catalog
    assert 0 < one.total - none.total <= 20
    assert one.total <= prompt_overhead.PROMPT_BUDGET_TOKENS


@pytest.mark.parametrize("agent", HELPER_NAMES)
async def test_hostile_output_is_shown_escaped_and_hides_nothing(
    helpers_on_path: Path, workspace: Path, agent: str
) -> None:
    shown: list[str] = []
    result = await delegate(workspace, agent, "hostile", ScriptedApprover(ONCE), shown=shown)
    assert result.ok
    lines = "".join(shown)
    assert not any(char in lines for char in "\x1b\r\x07")
    assert "look: \\e[2J\\e]0;pwned\\x07CLEARED" in lines  # their words, made visible
    assert "\\e[31mRAW LINE\\r\\e[Kspoof" in lines  # a raw line: whole, nothing hidden


async def test_plan_mode_neither_lists_nor_runs_delegate_task(
    helpers_on_path: Path, workspace: Path
) -> None:
    registry = ToolRegistry()
    register_helper_tool(registry, HELPER_NAMES, 60)
    approval = ask_policy()
    approval.switch_mode(Mode.PLAN)
    approver = ScriptedApprover()  # fails the test if asked
    ctx = tool_context(workspace, approver=approver, approval=approval)
    listed = json.dumps(registry.schemas(ctx, checked=True))
    assert DELEGATE_TASK not in listed
    result = await registry.dispatch(DELEGATE_TASK, {"agent": "claude", "task": "hi"}, ctx)
    assert not result.ok and "plan mode is read-only" in result.output
    assert approver.requests == [] and not helpers_on_path.exists()
    approval.switch_mode(Mode.ASK)  # out of plan mode, the catalog lists it
    assert DELEGATE_TASK in json.dumps(registry.schemas(ctx, checked=True))


def test_helpers_lists_installed_with_version_missing_and_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zcoder.tui.parts.helpers_ui import helpers_listing

    bin_dir = install_helpers(tmp_path / "bin", ("claude", "codex"))
    monkeypatch.setenv("PATH", str(bin_dir))
    lines = helpers_listing(("claude",)).splitlines()
    assert (
        lines[1] == f"/claude  Claude Code: installed: {bin_dir}/claude (claude 9.9.9 (stand-in))"
    )
    assert lines[2].startswith("/codex  Codex: installed") and lines[2].endswith(
        "; turned off (ZCODER_HELPERS)"
    )
    assert lines[3] == "/opencode  opencode: not installed (no `opencode` on PATH)"
    assert "delegate_task" in lines[4]
    assert "None can be used here" in helpers_listing(())


def test_a_huge_line_is_shown_cut_and_the_next_line_whole() -> None:
    from zcoder.tools.helpers import run

    shown: list[str] = []
    lines = run._Lines(find_helper("opencode"), HelperReading(), shown.append)
    chunk = "x" * 65536
    for _ in range(run.MAX_LINE_CHARS // len(chunk) + 3):
        lines.feed(chunk)
    lines.feed('still the long line\n{"type": "text", "part": {"text": "after it"}}\n')
    lines.flush()
    assert len(shown) == 2
    assert shown[0] == "x" * run.CUT_LINE_CHARS + " … (line cut)\n"
    assert shown[1] == "after it\n"
