"""An editor asked about a helper agent (issue 31 item 4): the question names it, carries
its command line and that it runs on its own terms, offers no "always"; a client that
cancels, or answers what was not offered, starts nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp.test_approvals import approver, command
from tests.fixtures.workspace import tool_context
from zcoder.tools import ApprovalDecision, ApprovalPolicy, CommandPolicy, Profile
from zcoder.tools.helpers.clis import find_helper
from zcoder.tools.helpers.run import authorize_helper, own_permissions


async def test_the_question_names_the_helper_and_offers_no_always() -> None:
    acp_approver, asker, _ = approver("allow_once")
    request = command(
        command="claude -p -- 'fix it'",
        allow_always=False,
        warning=own_permissions(find_helper("claude")),
        helper="Claude Code",
    )
    assert await acp_approver.approve_command(request) is ApprovalDecision.ONCE
    ((tool_call, options),) = asker.asked
    assert [o.option_id for o in options] == ["allow_once", "reject_once"]
    shown = tool_call.content[0].content.text  # type: ignore[index]
    assert shown.split("\n\n") == [
        "Hand this task to Claude Code, in /ws/sub?",
        "```\n$ claude -p -- 'fix it'\n```",
        "warning: Claude Code runs with its own permissions, outside zcoder's guard and approvals",
    ]
    assert (tool_call.raw_input or {})["helper"] == "Claude Code"  # --connect's dialog


@pytest.mark.parametrize("answer", ["cancelled", "allow_always"])
async def test_an_editor_that_does_not_say_yes_starts_nothing(answer: str) -> None:
    acp_approver, asker, _ = approver(answer)
    ctx = tool_context(Path("/"), approval=ApprovalPolicy(CommandPolicy.ALLOW, Profile.CODING))
    ctx.approver = acp_approver
    why = await authorize_helper(find_helper("codex"), "do it", ctx, 60)
    assert why == "the user said no; Codex was not started"
    assert len(asker.asked) == 1  # asked, whatever --yes said
