"""Hooks in Claude Code's format: reading them, running them, and what their answers mean.

Every hook here is a real program run by a real shell (small Python scripts the tests write);
nothing about running them is faked.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hooks.support import PY, marker_script, script, write_settings
from zcoder.hooks import (
    ALLOW,
    ASK,
    DENY,
    HookEngine,
    HookOutcome,
    HookRun,
    HookSet,
    interpret,
    load_hooks,
    parse_hooks,
    run_hook,
)
from zcoder.hooks.config import PRE_TOOL_USE, USER_PROMPT_SUBMIT


@pytest.fixture
def hook(tmp_path: Path) -> Callable[[str, str], str]:
    """``hook(name, body)``: a hook command, a Python script of ``body`` (tests.hooks.support)."""
    return functools.partial(script, tmp_path)


def hook_set(event: str, command: str, matcher: str = "", timeout: float = 10) -> HookSet:
    found = HookSet()
    entry = {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": command, "timeout": timeout}],
    }
    parse_hooks({"hooks": {event: [entry]}}, Path("settings.json"), project=False, into=found)
    return found


# -- reading -----------------------------------------------------------------------------


def test_user_and_project_hooks_load_and_bad_blocks_are_listed(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    write_settings(
        home / "settings.json",
        {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]}],
            "Notification": [{"hooks": [{"type": "command", "command": "b"}]}],
            "PostToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "c"}]}],
            "Stop": [{"hooks": [{"type": "prompt", "prompt": "d"}, {"command": "e"}]}],
        },
    )
    write_settings(
        workspace / ".zcoder" / "settings.json",
        {"PreToolUse": [{"matcher": "", "hooks": [{"command": "f", "timeout": 10_000}]}]},
    )
    found = load_hooks(home, workspace)
    commands = found.commands_for(PRE_TOOL_USE, "run_command")
    assert [(c.command, c.project, c.timeout) for c in commands] == [
        ("a", False, 60.0),
        ("f", True, 600.0),
    ]
    assert [c.command for c in found.commands_for("Stop")] == ["e"]
    assert len(found.problems) == 3
    assert any("Notification is not an event" in p for p in found.problems)
    assert any("not a valid pattern" in p for p in found.problems)
    assert any("'prompt' is not supported" in p for p in found.problems)
    assert [c.command for c in found.project_commands()] == ["f"]


def test_a_broken_settings_file_is_a_problem_not_a_crash(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text("{not json")
    found = load_hooks(home, workspace)
    assert not found
    assert "not valid JSON" in found.problems[0]


@pytest.mark.parametrize(
    ("matcher", "tool", "matches"),
    [
        ("Bash", "run_command", True),
        ("run_command", "run_command", True),
        ("Edit|Write", "replace_text", True),
        ("Edit|Write", "write_file", True),
        ("Edit|Write", "read_file", False),
        ("Read", "read_file_range", True),
        ("mcp__git__.*", "mcp__git__status", True),
        ("Bas", "run_command", False),  # a whole name, not a part of one
        ("*", "anything", True),
    ],
)
def test_matchers_know_claude_code_names(matcher: str, tool: str, matches: bool) -> None:
    assert bool(hook_set(PRE_TOOL_USE, "x", matcher).commands_for(PRE_TOOL_USE, tool)) is matches


# -- running -----------------------------------------------------------------------------


async def test_a_hook_gets_claude_code_payload_and_environment(
    hook: Callable[[str, str], str], workspace: Path
) -> None:
    seen = workspace.parent / "seen.json"
    body = "payload['env'] = os.environ['CLAUDE_PROJECT_DIR']\n"
    command = hook("record", body + f"open({str(seen)!r}, 'w').write(json.dumps(payload))")
    engine = HookEngine(hook_set(PRE_TOOL_USE, command, "Write"), workspace, session_id="s1")
    outcome = await engine.pre_tool_use("write_file", {"path": "a.txt", "content": "x"})
    assert outcome.ran == 1 and not outcome.block and not outcome.errors
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == PRE_TOOL_USE
    assert payload["session_id"] == "s1" and payload["cwd"] == str(workspace)
    assert payload["tool_name"] == "Write" and payload["zcoder_tool_name"] == "write_file"
    assert payload["tool_input"] == {"path": "a.txt", "content": "x", "file_path": "a.txt"}
    assert payload["env"] == str(workspace)


async def test_exit_2_blocks_with_its_stderr_and_exit_1_does_not(
    hook: Callable[[str, str], str], workspace: Path
) -> None:
    blocker = hook("block", "print('no rm here', file=sys.stderr); sys.exit(2)")
    outcome = await HookEngine(hook_set(PRE_TOOL_USE, blocker), workspace).pre_tool_use(
        "run_command", {"command": "ls"}
    )
    assert outcome.block and outcome.reason == "no rm here"

    failing = hook("fail", "print('oops', file=sys.stderr); sys.exit(1)")
    outcome = await HookEngine(hook_set(PRE_TOOL_USE, failing), workspace).pre_tool_use(
        "run_command", {"command": "ls"}
    )
    assert not outcome.block
    assert outcome.errors and "exit status 1" in outcome.errors[0] and "oops" in outcome.errors[0]


async def test_a_hook_past_its_deadline_is_killed_with_its_children(
    hook: Callable[[str, str], str], workspace: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    command = hook(
        "slow",
        "import subprocess\n"
        f"child = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)",
    )
    run = await run_hook(command, {}, workspace, timeout=2)
    assert run.timed_out and run.exit_code is None
    child = int(pid_file.read_text())
    for _ in range(200):  # reaped by init once killed: wait for it to be gone
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.05)
    else:
        pytest.fail("the hook's child outlived the hook's deadline")
    outcome = interpret(PRE_TOOL_USE, run, "slow")
    assert not outcome.block and "did not finish in time" in outcome.error


async def test_a_flooding_hook_is_bounded_and_does_not_hang(
    hook: Callable[[str, str], str], workspace: Path
) -> None:
    command = hook("flood", "sys.stdout.write('x' * 20_000_000)")
    run = await run_hook(command, {"big": "y" * 2_000_000}, workspace, timeout=60)
    assert run.exit_code == 0
    assert len(run.stdout) == 64 * 1024


async def test_a_child_that_leaves_the_group_holding_the_output_does_not_hold_zcoder(
    hook: Callable[[str, str], str], workspace: Path, tmp_path: Path
) -> None:
    """Attack: the hook starts a child in a session of its own (out of reach of the group
    kill) that keeps the hook's standard output open; the hook's deadline still holds (it
    used to wait for that output to end, for as long as the child lived)."""
    pid_file = tmp_path / "escaped.pid"
    command = hook(
        "escape",
        "import subprocess\n"
        f"child = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(120)'],"
        " start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('answered')",
    )
    try:
        run = await run_hook(command, {}, workspace, timeout=3)
    finally:
        if pid_file.exists():  # the test's own child: ended here
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    # Its end cannot be seen while the child holds its output: at the deadline it counts
    # as a hook that did not finish (for a RelayMessage hook: held), with what it said.
    assert run.timed_out and run.stdout == "answered\n"


async def test_a_hook_that_never_reads_its_input_is_fine(tmp_path: Path, workspace: Path) -> None:
    run = await run_hook("exit 0", {"big": "y" * 5_000_000}, workspace, timeout=30)
    assert run.exit_code == 0 and not run.timed_out


# -- answers -----------------------------------------------------------------------------


def _answer(event: str, stdout: str, code: int = 0) -> HookOutcome:
    return interpret(event, HookRun(code, stdout, ""), "h")


@pytest.mark.parametrize(
    ("output", "permission", "block"),
    [
        (
            '{"hookSpecificOutput": {"permissionDecision": "deny", '
            '"permissionDecisionReason": "r"}}',
            DENY,
            True,
        ),
        ('{"hookSpecificOutput": {"permissionDecision": "ask"}}', ASK, False),
        ('{"hookSpecificOutput": {"permissionDecision": "allow"}}', ALLOW, False),
        ('{"decision": "approve"}', ALLOW, False),
        ('{"decision": "block", "reason": "r"}', "", True),
        ('{"hookSpecificOutput": {"permissionDecision": "whatever"}}', "", False),
        ("plain text", "", False),
    ],
)
def test_json_answers_to_a_tool_use(output: str, permission: str, block: bool) -> None:
    outcome = _answer(PRE_TOOL_USE, output)
    assert (outcome.permission, outcome.block) == (permission, block)


def test_prompt_hooks_add_context_and_may_stop() -> None:
    assert _answer(USER_PROMPT_SUBMIT, "The branch is main.\n").context == "The branch is main."
    stopped = _answer(USER_PROMPT_SUBMIT, '{"continue": false, "stopReason": "frozen"}')
    assert stopped.stop and stopped.stop_reason == "frozen"


async def test_answers_join_strictly_and_unconsented_project_hooks_do_not_run(
    hook: Callable[[str, str], str], workspace: Path, tmp_path: Path
) -> None:
    decide = "print(json.dumps({'hookSpecificOutput': {'permissionDecision': %r, %s}}))"
    allow = hook("allow", decide % ("allow", ""))
    deny = hook("deny", decide % ("deny", "'permissionDecisionReason': 'no'"))
    marker = tmp_path / "project-ran"
    project = marker_script(tmp_path, "project", marker)
    found = HookSet()
    parse_hooks(
        {"hooks": {PRE_TOOL_USE: [{"hooks": [{"command": allow}, {"command": deny}]}]}},
        Path("user.json"),
        project=False,
        into=found,
    )
    parse_hooks(
        {"hooks": {PRE_TOOL_USE: [{"hooks": [{"command": project}]}]}},
        Path(".zcoder/settings.json"),
        project=True,
        into=found,
    )
    outcome = await HookEngine(found, workspace).pre_tool_use("run_command", {"command": "ls"})
    assert outcome.ran == 2 and outcome.permission == DENY and outcome.block
    assert outcome.reason == "no"
    assert len(outcome.skipped) == 1 and not marker.exists()

    consented = HookEngine(found, workspace, allowed=lambda command: True)
    await consented.pre_tool_use("run_command", {"command": "ls"})
    assert marker.read_text() == PRE_TOOL_USE
