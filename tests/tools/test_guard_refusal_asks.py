"""A command the guard refuses, in the coding profile: always asked, never run unasked.

Attack: the user answered ``a`` on a harmless command (or started with ``--yes``, or has a
PreToolUse hook that answers ``allow``); a prompt-injected model then asks for
``rm -rf ~``. It must be asked about, with the guard's reason and no ``a``, and a no (or
nobody to ask) must leave the home as it was. Every run here has a temporary $HOME.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.approver import ALWAYS, DENY, RELAY, ScriptedApprover
from zcoder.tools import (
    ApprovalDecision,
    ApprovalPolicy,
    CommandApprovalRequest,
    CommandPolicy,
    Profile,
    ToolContext,
    ToolResult,
    default_registry,
)

CODING = Profile.CODING
WIPE_HOME = "rm -rf ~"


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$HOME for this test: a directory whose loss harms nothing, holding a canary."""
    home = tmp_path / "user-home"
    home.mkdir()
    (home / "thesis.txt").write_text("four years of work\n")
    monkeypatch.setenv("HOME", str(home))
    assert os.environ["HOME"] == str(home)
    return home


def intact(home: Path) -> bool:
    return (home / "thesis.txt").read_text() == "four years of work\n"


async def run(ctx: ToolContext, command: str, hook: str = "") -> ToolResult:
    ctx.hook_permission = hook
    return await default_registry().dispatch("run_command", {"command": command}, ctx)


def asking(
    make_ctx: Any, *answers: ApprovalDecision
) -> tuple[ToolContext, ApprovalPolicy, ScriptedApprover]:
    """A user's coding turn whose commands are asked about (``ZCODER_COMMANDS=ask``),
    answered with ``answers``; its approval policy and its approver."""
    approval = ApprovalPolicy(CommandPolicy.ASK, CODING)
    approver = ScriptedApprover(*answers)
    return make_ctx(approval=approval, approver=approver), approval, approver


def the_refused_question(request: CommandApprovalRequest) -> None:
    assert request.command == WIPE_HOME
    assert request.refused and not request.allow_always
    assert request.warning is not None and "home directory" in request.warning


async def test_after_a_on_a_harmless_command_the_wipe_is_asked_and_no_keeps_the_home(
    make_ctx, fake_home: Path
) -> None:
    ctx, approval, approver = asking(make_ctx, ALWAYS, DENY)
    harmless = await run(ctx, "echo harmless")
    assert harmless.ok and approval.always_granted
    wiped = await run(ctx, WIPE_HOME)
    assert not wiped.ok
    assert "refused by the safety guard" in wiped.output and "said no" in wiped.output
    assert len(approver.requests) == 2
    the_refused_question(approver.requests[1])
    assert intact(fake_home)
    # The grant stands for what the guard lets through: the next harmless command is unasked.
    assert (await run(ctx, "echo still granted")).ok
    assert len(approver.requests) == 2


async def test_yes_does_not_run_the_wipe_unasked(make_ctx, fake_home: Path) -> None:
    approver = ScriptedApprover(DENY)
    ctx = make_ctx(policy=CommandPolicy.ALLOW, approver=approver)
    assert (await run(ctx, "echo harmless")).ok  # --yes: unasked
    wiped = await run(ctx, WIPE_HOME)
    assert not wiped.ok and "refused by the safety guard" in wiped.output
    [request] = approver.requests
    the_refused_question(request)
    assert intact(fake_home)


@pytest.mark.parametrize("policy", [CommandPolicy.ASK, CommandPolicy.ALLOW])
async def test_a_hooks_allow_does_not_skip_the_question(
    make_ctx, fake_home: Path, policy: CommandPolicy
) -> None:
    approver = ScriptedApprover(DENY)
    ctx = make_ctx(policy=policy, approver=approver)
    wiped = await run(ctx, WIPE_HOME, hook="allow")
    assert not wiped.ok
    [request] = approver.requests
    the_refused_question(request)
    assert intact(fake_home)


async def test_a_relayed_tasks_wipe_is_asked_with_the_reason_too(make_ctx, fake_home: Path) -> None:
    approver = ScriptedApprover(DENY)
    ctx = make_ctx(policy=CommandPolicy.ALLOW, approver=approver, origin=RELAY)
    assert not (await run(ctx, WIPE_HOME)).ok
    [request] = approver.requests
    the_refused_question(request)
    assert request.origin is RELAY
    assert intact(fake_home)


async def test_nobody_to_ask_means_refused(make_ctx, fake_home: Path) -> None:
    class NobodyHere:
        async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
            raise OSError("no terminal to ask the user for approval")

        async def approve_edit(self, request: object) -> ApprovalDecision:
            raise OSError("no terminal")

    ctx = make_ctx(policy=CommandPolicy.ALLOW, approver=NobodyHere())
    wiped = await run(ctx, WIPE_HOME, hook="allow")
    assert not wiped.ok
    assert "refused by the safety guard" in wiped.output
    assert "could not be asked" in wiped.output
    assert intact(fake_home)


async def test_an_a_answered_anyway_approves_this_one_command_and_grants_nothing(
    make_ctx, fake_home: Path
) -> None:
    """The user may still run it (it is theirs to decide); ``a`` counts as once."""
    ctx, approval, approver = asking(make_ctx, ALWAYS, DENY)
    wiped = await run(ctx, WIPE_HOME)
    assert wiped.ok, wiped.output
    assert not fake_home.exists()  # the temporary home: what the user approved ran
    assert not approval.always_granted
    assert not (await run(ctx, "echo asked again")).ok  # asked (and denied): no grant
    assert len(approver.requests) == 2


async def test_deny_commands_still_refuses_without_asking(make_ctx, fake_home: Path) -> None:
    ctx = make_ctx(policy=CommandPolicy.DENY, approver=ScriptedApprover())
    wiped = await run(ctx, WIPE_HOME, hook="allow")
    assert not wiped.ok and "--deny-commands" in wiped.output
    assert intact(fake_home)


async def test_sysadmin_still_refuses_outright(make_ctx, fake_home: Path) -> None:
    approver = ScriptedApprover()  # raises if asked
    ctx = make_ctx(profile=Profile.SYSADMIN, policy=CommandPolicy.ASK, approver=approver)
    wiped = await run(ctx, WIPE_HOME, hook="allow")
    assert not wiped.ok and "sysadmin safety guard" in wiped.output
    assert approver.requests == []
    assert intact(fake_home)
