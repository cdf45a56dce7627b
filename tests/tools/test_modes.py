"""Permission modes: the order Shift+Tab cycles, names as typed, what each mode asks, and
the read-only classifier plan mode runs commands through."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fixtures.approver import ScriptedApprover
from zcoder.tools import (
    ApprovalDecision,
    ApprovalPolicy,
    CommandPolicy,
    EditPolicy,
    Mode,
    Profile,
    TurnOrigin,
    parse_mode,
)
from zcoder.tools.guard import read_only_refusal

READ_ONLY = [
    "ls -la src | grep -v x && cat a.txt 2>/dev/null",
    "git log --oneline -5; wc -l <f >&2",
    "find . -name '*.py' -type f",
    "git status",
    "git diff HEAD~1 -- src",
    "git branch -a",
    "cd src && ls",
    "grep -rn TODO . | head -20",
    "date +%s",
    "sort -u names.txt",
    "cat <notes.txt",
    "ls &>/dev/null",
    "git --no-pager log -p -- src",
    "cat ~/notes.txt",
]

WRITES = [
    "rm x",
    "sed -i s/a/b/ f",
    "echo hi | tee x",
    "cat > x",
    "cat a >> b",
    "ls >&x",
    "git config user.name x",
    "git -c core.pager=sh log",
    "git branch -D main",
    "git diff --output=x",
    "git diff --out=x",
    "sort -o x y",
    "sort --out=x y",
    "sort -uo x y",
    "find . -delete",
    "find . -exec rm {} +",
    "date 0101",
    "uniq in out",
    "ls &",
    "(rm x)",
    "X=1 ls",
    "ls $(rm x)",
    "cat `rm x`",
    "ls *.py",
    "$CMD",
    "'rm' x",
    "r\\m x",
    "./ls",
    "/bin/rm x",
    "f() { rm x; }; f",
    "cat <<EOF > x\nhi\nEOF",
    "ls; touch y",
    "tree -o out",
    "rg --pre ./run x",
    "rg --hostname-bin=./run --hyperlink-format=default x",  # runs it for the host name
    "tree -R -H . -L 1",  # writes 00Tree.html in each directory
    "tree -RH . -L 1",
    "python -c 'print(1)'",
    "xargs rm < list",
    "ls 'unterminated",
    "",
    "echo > x hi",
    ">x ls",
    "ls 3>x",
    "ls &>x",
    "ls >| x",
    "ls >/dev/null2",
    "ls 2>&1 >x",
    'echo "$(rm x)"',
    "ls <(rm x)",
    "ls <<< hi",
    "find . {-delete,}",
    "if true; then rm x; fi",
    "while true; do ls; done",
    "command rm x",
    "git -C .. status",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_commands_that_only_read_are_read_only(command: str) -> None:
    assert read_only_refusal(command) is None


@pytest.mark.parametrize("command", WRITES)
def test_commands_that_may_write_or_run_anything_are_not(command: str) -> None:
    assert read_only_refusal(command) is not None


def test_shift_tab_cycles_ask_accept_edits_plan_and_back() -> None:
    assert [Mode.ASK.next(), Mode.ACCEPT_EDITS.next(), Mode.PLAN.next()] == [
        Mode.ACCEPT_EDITS,
        Mode.PLAN,
        Mode.ASK,
    ]
    assert Mode.ACCEPT_EDITS.label == "accept edits"


@pytest.mark.parametrize(
    "typed", ["accept edits", "accept-edits", "Accept_Edits", " ACCEPT  EDITS "]
)
def test_a_mode_is_taken_as_users_type_it(typed: str) -> None:
    assert parse_mode(typed) is Mode.ACCEPT_EDITS


def test_an_unknown_mode_names_the_modes() -> None:
    with pytest.raises(
        ValueError, match="unknown mode 'yolo'; the modes are ask, accept-edits, plan"
    ):
        parse_mode("yolo")


@pytest.mark.parametrize(
    ("mode", "profile", "origin", "trusted", "asks"),
    [
        (Mode.ASK, Profile.CODING, TurnOrigin.USER, False, True),  # ZCODER_EDITS=ask
        (Mode.ACCEPT_EDITS, Profile.CODING, TurnOrigin.USER, False, False),
        (Mode.ACCEPT_EDITS, Profile.CODING, TurnOrigin.RELAY, False, True),  # relayed: asks
        (Mode.ACCEPT_EDITS, Profile.CODING, TurnOrigin.RELAY, True, False),  # trusted sender
        (Mode.ACCEPT_EDITS, Profile.CODING, TurnOrigin.STEERED, True, True),  # steered: asks
        (Mode.ACCEPT_EDITS, Profile.SYSADMIN, TurnOrigin.USER, False, True),  # no standing yes
    ],
)
def test_accept_edits_skips_the_edit_question_only_where_a_standing_yes_may(
    mode: Mode, profile: Profile, origin: TurnOrigin, trusted: bool, asks: bool
) -> None:
    approval = ApprovalPolicy(CommandPolicy.ASK, profile, edits=EditPolicy.ASK, mode=mode)
    assert approval.edits_ask(EditPolicy.ASK, origin, sender_trusted=trusted) is asks


def test_ask_mode_keeps_todays_default_of_edits_written_at_once() -> None:
    approval = ApprovalPolicy(CommandPolicy.ASK, Profile.CODING)
    assert approval.mode is Mode.ASK
    assert not approval.edits_ask(EditPolicy.AUTO, TurnOrigin.USER, sender_trusted=False)


async def authorize(approval: ApprovalPolicy, command: str, hook: str = "") -> tuple[bool, str]:
    approver = ScriptedApprover(default=ApprovalDecision.ONCE)
    result = await approval.authorize(
        command,
        cwd=Path("/tmp"),
        timeout_seconds=5,
        origin=TurnOrigin.USER,
        approver=approver,
        hook=hook,
    )
    return result.allowed, result.reason


async def test_plan_mode_refuses_a_writing_command_whatever_yes_a_or_a_hook_said() -> None:
    approval = ApprovalPolicy(CommandPolicy.ALLOW, Profile.CODING, mode=Mode.PLAN)
    allowed, reason = await authorize(approval, "touch x", hook="allow")
    assert not allowed and reason.startswith("plan mode runs only read-only commands")
    assert await authorize(approval, "ls") == (True, "allowed by --yes")


async def answered_a(approval: ApprovalPolicy, command: str) -> bool:
    """``command`` asked about and answered ``a``; whether a standing grant followed."""
    await approval.authorize(
        command,
        cwd=Path("/tmp"),
        timeout_seconds=5,
        origin=TurnOrigin.USER,
        approver=ScriptedApprover(ApprovalDecision.ALWAYS),
    )
    return approval.always_granted


async def test_an_a_said_while_planning_ends_with_plan_mode() -> None:
    """`a` to a command in plan mode was said of commands that only read: after the plan
    is accepted (back to ask), a command is asked again, not run on that word."""
    approval = ApprovalPolicy(CommandPolicy.ASK, Profile.CODING, mode=Mode.PLAN)
    assert await answered_a(approval, "ls")
    assert await authorize(approval, "cat a.txt") == (True, "allowed for this process (a)")
    approval.switch_mode(Mode.ASK)
    assert await authorize(approval, "touch x") == (True, "approved once")  # asked again
    # An `a` said in ask mode is the user's for the process, through plan mode and back.
    assert await answered_a(approval, "make")
    approval.switch_mode(Mode.PLAN)
    approval.switch_mode(Mode.ASK)
    assert await authorize(approval, "touch y") == (True, "allowed for this process (a)")


async def test_an_a_said_in_a_turn_pinned_to_plan_mode_ends_with_that_turn() -> None:
    """/init drafts in a turn pinned to plan mode: an `a` said there was said of commands
    that only read, and must not run the user's next writing command unasked."""
    approval = ApprovalPolicy(CommandPolicy.ASK, Profile.CODING)
    with approval.pinned(Mode.PLAN):
        assert await answered_a(approval, "ls")
        assert await authorize(approval, "cat a.txt") == (True, "allowed for this process (a)")
    assert approval.mode is Mode.ASK and not approval.always_granted
    assert await authorize(approval, "touch x") == (True, "approved once")  # asked again
    # The user's own `a`, said outside, outlives a pinned turn.
    assert await answered_a(approval, "make")
    with approval.pinned(Mode.PLAN):
        pass
    assert await authorize(approval, "touch y") == (True, "allowed for this process (a)")


async def test_the_sysadmin_guard_speaks_first_in_plan_mode() -> None:
    approval = ApprovalPolicy(CommandPolicy.ASK, Profile.SYSADMIN, mode=Mode.PLAN)
    allowed, reason = await authorize(approval, "rm -rf /")
    assert not allowed and reason.startswith("refused by the sysadmin safety guard")


PIECES = [*"ab $`'\"\\|&;<>(){}[]*?~-=\n\t", "cat ", "rm ", "ls ", "/dev/null", "git "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_the_classifier_never_raises_and_never_lets_rm_through(text: str) -> None:
    why = read_only_refusal(text)
    assert why is None or isinstance(why, str)
    if why is None and not set("'\"\\") & set(text):  # unquoted: each line is commands
        assert not any(line.lstrip(" \t;&|").startswith("rm ") for line in text.splitlines())
