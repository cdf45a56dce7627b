"""The remote zcoder's permission requests as this TUI's approval questions: the same
content, the options the remote offered, and no yes that was not given here."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import text_block, tool_content, tool_diff_content
from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, ToolCallUpdate

from zcoder.base.ssh_target import Target
from zcoder.remote.agent import RemoteAgent
from zcoder.tools import (
    ApprovalDecision,
    CommandApprovalRequest,
    EditApprovalRequest,
    TurnOrigin,
)


class Approver:
    def __init__(self, decision: ApprovalDecision | None) -> None:
        self.decision = decision  # None: never answers
        self.asked: list[Any] = []

    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        return await self._answer(request)

    async def approve_edit(self, request: EditApprovalRequest) -> ApprovalDecision:
        return await self._answer(request)

    async def _answer(self, request: Any) -> ApprovalDecision:
        self.asked.append(request)
        if self.decision is None:
            await asyncio.Event().wait()
        assert self.decision is not None
        return self.decision


def agent(approver: Approver) -> RemoteAgent:
    return RemoteAgent(
        Target("box"),
        {},
        on_event=lambda _e: None,
        on_user=lambda _t: None,
        approver=approver,
        on_dropped=lambda _w: None,
    )


ONCE = PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")
ALWAYS = PermissionOption(option_id="allow_always", name="Allow always", kind="allow_always")
REJECT = PermissionOption(option_id="reject_once", name="Reject", kind="reject_once")


def command_call(**raw: Any) -> ToolCallUpdate:
    return ToolCallUpdate(
        tool_call_id="c1",
        title=raw.get("command", ""),
        kind="execute",
        status="pending",
        raw_input={"cwd": "/srv/app", "timeout_seconds": 120, **raw},
    )


async def test_a_command_is_asked_with_the_remote_content() -> None:
    approver = Approver(ApprovalDecision.ALWAYS)
    answer = await agent(approver).request_permission(
        "s", command_call(command="make test", warning="looks odd"), [ONCE, ALWAYS, REJECT]
    )
    [asked] = approver.asked
    assert isinstance(asked, CommandApprovalRequest)
    assert (asked.command, asked.cwd, asked.timeout_seconds) == ("make test", Path("/srv/app"), 120)
    assert asked.allow_always and asked.warning == "looks odd" and asked.origin is TurnOrigin.USER
    assert answer.outcome == AllowedOutcome(outcome="selected", option_id="allow_always")


async def test_a_relayed_command_offers_no_always_and_says_who_asked() -> None:
    approver = Approver(ApprovalDecision.ONCE)
    answer = await agent(approver).request_permission(
        "s", command_call(command="ls", requested_by="from api (pid 4)"), [ONCE, REJECT]
    )
    [asked] = approver.asked
    assert not asked.allow_always and asked.origin is TurnOrigin.RELAY
    assert asked.requested_by == "from api (pid 4)"
    assert answer.outcome == AllowedOutcome(outcome="selected", option_id="allow_once")


async def test_a_remote_background_command_is_asked_here_as_one() -> None:
    approver = Approver(ApprovalDecision.ONCE)
    await agent(approver).request_permission(
        "s", command_call(command="npm run dev", background=True), [ONCE, REJECT]
    )
    await agent(approver).request_permission("s", command_call(command="ls"), [ONCE, REJECT])
    assert [asked.background for asked in approver.asked] == [True, False]


async def test_always_is_never_answered_where_it_was_not_offered() -> None:
    answer = await agent(Approver(ApprovalDecision.ALWAYS)).request_permission(
        "s", command_call(command="ls"), [ONCE, REJECT]
    )
    assert answer.outcome == DeniedOutcome(outcome="cancelled")


async def test_a_denial_and_a_closed_question_are_refusals() -> None:
    denied = await agent(Approver(ApprovalDecision.DENY)).request_permission(
        "s", command_call(command="ls"), [ONCE, REJECT]
    )
    assert denied.outcome == AllowedOutcome(outcome="selected", option_id="reject_once")
    remote = agent(Approver(None))
    asking = asyncio.ensure_future(
        remote.request_permission("s", command_call(command="ls"), [ONCE, REJECT])
    )
    while not remote._asking:
        await asyncio.sleep(0)
    for task in remote._asking:
        task.cancel()  # what a stopped turn or a lost connection does
    closed = await asking
    assert closed.outcome == AllowedOutcome(outcome="selected", option_id="reject_once")


async def test_an_edit_is_asked_with_its_diff() -> None:
    approver = Approver(ApprovalDecision.ONCE)
    call = ToolCallUpdate(
        tool_call_id="e1",
        title="replace_text wants to change a.py",
        kind="edit",
        status="pending",
        content=[tool_diff_content("/srv/app/a.py", "x = 2\n", "x = 1\n")],
        raw_input={"tool": "replace_text", "paths": ["a.py"]},
    )
    await agent(approver).request_permission("s", call, [ONCE, ALWAYS, REJECT])
    [asked] = approver.asked
    assert isinstance(asked, EditApprovalRequest)
    assert (asked.tool, asked.paths, asked.allow_turn) == ("replace_text", ("a.py",), True)
    assert "-x = 1" in asked.diff and "+x = 2" in asked.diff
    binary = ToolCallUpdate(
        tool_call_id="e2",
        title="t",
        kind="edit",
        content=[tool_content(text_block("Binary files differ"))],
        raw_input={"tool": "write_file", "paths": ["b.bin"]},
    )
    await agent(approver).request_permission("s", binary, [ONCE, REJECT])
    assert approver.asked[-1].diff == "Binary files differ"


async def test_a_command_the_remote_guard_refuses_is_asked_as_one_with_no_a() -> None:
    """The remote's "refused" mark reaches this TUI's dialog: its title and reason, and no
    `a` (in a relayed task's dialog `a` would otherwise say yes once)."""
    from zcoder.tui.dialogs.approval import approval_screen

    approver = Approver(ApprovalDecision.DENY)
    call = command_call(
        command="rm -rf ~",
        warning="recursive rm on '~' would affect a home directory",
        refused=True,
        requested_by="from api (pid 4242, /src/api)",
    )
    answer = await agent(approver).request_permission("s", call, [ONCE, REJECT])
    [asked] = approver.asked
    assert isinstance(asked, CommandApprovalRequest)
    assert asked.refused and not asked.allow_always and asked.origin is TurnOrigin.RELAY
    dialog = approval_screen(asked)
    assert "guard refuses this command" in str(dialog.title_text())
    assert dialog.answer_for("a") is None and dialog.answer_for("y") is ApprovalDecision.ONCE
    assert answer.outcome == AllowedOutcome(outcome="selected", option_id="reject_once")


async def test_only_a_true_refused_mark_counts() -> None:
    approver = Approver(ApprovalDecision.DENY)
    await agent(approver).request_permission(
        "s", command_call(command="ls", refused="yes"), [ONCE, ALWAYS, REJECT]
    )
    [asked] = approver.asked
    assert not asked.refused


async def test_a_consent_closed_or_not_shown_here_is_no_answer_at_all() -> None:
    """Issue 27, item 7: a consent the remote keeps (``kept``), closed unanswered or too
    big for this terminal's dialog, is answered "cancelled" (the remote saves nothing and
    asks again), never Reject (a refusal kept for good); a clear no is still a Reject."""
    from zcoder.agent import ConfirmationUnavailable

    class TooSmall(Approver):
        async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
            self.asked.append(request)
            raise ConfirmationUnavailable("the terminal is too small for the dialog")

    consent = command_call(command="start the MCP server 'x'", kept=True)
    small = TooSmall(None)
    unshown = await agent(small).request_permission("s", consent, [ONCE, REJECT])
    assert unshown.outcome == DeniedOutcome(outcome="cancelled")
    assert small.asked[0].kept  # the dialog knew the answer would be kept
    remote = agent(Approver(None))
    asking = asyncio.ensure_future(remote.request_permission("s", consent, [ONCE, REJECT]))
    while not remote._asking:
        await asyncio.sleep(0)
    for task in remote._asking:
        task.cancel()
    assert (await asking).outcome == DeniedOutcome(outcome="cancelled")
    refused = await agent(Approver(ApprovalDecision.DENY)).request_permission(
        "s", consent, [ONCE, REJECT]
    )
    assert refused.outcome == AllowedOutcome(outcome="selected", option_id="reject_once")


async def test_a_remote_web_page_question_keeps_its_host_for_the_web_dialog() -> None:
    approver = Approver(ApprovalDecision.ALWAYS)
    answer = await agent(approver).request_permission(
        "s", command_call(command="GET https://x.org/a", web_host="x.org"), [ONCE, ALWAYS, REJECT]
    )
    [asked] = approver.asked
    assert (asked.command, asked.web_host, asked.allow_always) == (
        "GET https://x.org/a",
        "x.org",
        True,
    )
    assert answer.outcome == AllowedOutcome(outcome="selected", option_id="allow_always")
    [plain] = [Approver(ApprovalDecision.ONCE)]
    await agent(plain).request_permission("s", command_call(command="ls"), [ONCE, REJECT])
    assert plain.asked[0].web_host is None
