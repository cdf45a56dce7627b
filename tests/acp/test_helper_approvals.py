"""An editor asked about a helper agent (issue 31 item 4): the question names it, carries
its command line and that it runs on its own terms, offers no "always"; a client that
cancels, or answers what was not offered, starts nothing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.acp.test_approvals import approver, command
from tests.fixtures.workspace import tool_context
from zcoder.tools import ApprovalDecision, ApprovalPolicy, CommandPolicy, Profile
from zcoder.tools.helpers.clis import find_helper
from zcoder.tools.helpers.run import authorize_helper, own_permissions


async def test_the_question_names_the_helper_and_offers_no_always() -> None:
    acp_approver, asker, _ = approver("allow_once")
    warning = own_permissions(find_helper("claude"))
    asked = command(command="claude -p -- 'fix it'", allow_always=False, warning=warning)
    decision = await acp_approver.approve_command(replace(asked, helper="Claude Code"))
    assert decision is ApprovalDecision.ONCE
    [(call_update, offered)] = asker.asked
    assert {option.option_id for option in offered} == {"allow_once", "reject_once"}
    text = call_update.content[0].content.text  # type: ignore[index]
    expected = (
        "Hand this task to Claude Code, in /ws/sub?\n\n```\n$ claude -p -- 'fix it'\n```\n\n"
        f"warning: {warning}"
    )
    assert text == expected
    assert (call_update.raw_input or {})["helper"] == "Claude Code"  # --connect's dialog


@pytest.mark.parametrize("answer", ["cancelled", "allow_always"])
async def test_an_editor_that_does_not_say_yes_starts_nothing(answer: str) -> None:
    acp_approver, asker, _ = approver(answer)
    ctx = tool_context(Path("/"), approval=ApprovalPolicy(CommandPolicy.ALLOW, Profile.CODING))
    ctx.approver = acp_approver
    why = await authorize_helper(find_helper("codex"), "do it", ctx, 60)
    assert why == "the user said no; Codex was not started"
    assert len(asker.asked) == 1  # asked, whatever --yes said
