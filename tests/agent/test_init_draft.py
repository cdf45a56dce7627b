"""/init: a turn drafts AGENTS.md; the user sees the change and decides; an existing file
is named as replaced; nothing is written on a no, nor through a link."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from pathlib import Path

from tests.agent.support import Harness
from tests.fixtures.approver import DENY, ONCE
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import Notice, load_instructions
from zcoder.agent.init_draft import draft_from, run_init
from zcoder.tools import Mode

DRAFT = "# Agents\n\n- Test with `make test`.\n"
REPLY = f"I looked around. Here is the draft:\n\n```markdown\n{DRAFT}```\n"


def test_the_draft_is_the_replys_last_fenced_block() -> None:
    assert draft_from(REPLY) == DRAFT
    assert draft_from("```sh\nmake\n```\nthen\n~~~md\n# B\n~~~") == "# B\n"
    assert draft_from("# Plain\nno fence\n") == "# Plain\nno fence\n"
    assert draft_from("   ") == ""


async def test_the_draft_is_written_only_after_the_user_says_yes(
    harness: Harness, tmp_path: Path
) -> None:
    settings = harness.agent.settings
    settings.instruction_set = load_instructions(harness.workspace, tmp_path / "no-home")
    assert "make test" not in harness.agent.request_messages()[0]["content"]
    harness.approver.answers.append(ONCE)
    harness.server.enqueue(Turn.text(REPLY))
    outcome = await run_init(harness.agent, "the tests")

    sent = harness.bodies()[0]["messages"][-1]["content"]
    assert "Draft an AGENTS.md" in sent and "focus on: the tests" in sent
    assert "already there" not in sent
    (asked,) = harness.approver.edit_requests
    assert asked.tool == "/init" and asked.paths == ("AGENTS.md",)
    assert "+- Test with `make test`." in asked.diff
    assert (harness.workspace / "AGENTS.md").read_text() == DRAFT
    assert outcome.written and outcome.text.startswith("Wrote AGENTS.md (3 lines)")
    # The instructions are read again: the next request's system prompt holds the draft.
    assert "make test" in harness.agent.request_messages()[0]["content"]


async def test_an_existing_agents_md_is_named_and_kept_on_a_no(harness: Harness) -> None:
    (harness.workspace / "AGENTS.md").write_text("old rules\n")
    harness.approver.answers.append(DENY)
    harness.server.enqueue(Turn.text(REPLY))
    outcome = await run_init(harness.agent)

    assert (
        "An AGENTS.md is already there (10 bytes)" in harness.bodies()[0]["messages"][-1]["content"]
    )
    notices = [n.text for n in harness.log.of(Notice)]
    assert "AGENTS.md exists (10 bytes): the draft would replace it." in " ".join(notices)
    (asked,) = harness.approver.edit_requests
    assert "-old rules" in asked.diff and "+# Agents" in asked.diff
    assert (harness.workspace / "AGENTS.md").read_text() == "old rules\n"
    assert not outcome.written and "was not written" in outcome.text


async def test_an_agents_md_that_is_a_link_out_is_never_written_through(
    harness: Harness, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("precious\n")
    (harness.workspace / "AGENTS.md").symlink_to(outside)
    harness.server.enqueue(Turn.text(REPLY))
    outcome = await run_init(harness.agent)
    assert harness.approver.edit_requests == []
    assert outside.read_text() == "precious\n"
    assert "symbolic link" in outcome.text and not outcome.written


async def test_a_reply_without_a_draft_writes_nothing(harness: Harness) -> None:
    harness.server.enqueue(Turn.text(""), Turn.text(""), Turn.text(""), Turn.text(""))
    outcome = await run_init(harness.agent)
    assert not outcome.written and "no draft" in outcome.text
    assert not (harness.workspace / "AGENTS.md").exists()


async def test_the_drafting_turn_changes_nothing_whatever_the_model_calls(
    harness: Harness,
) -> None:
    """The draft is written on the user's yes, never by the turn that drafts it: the turn
    runs in plan mode, so a model that writes or runs a command is refused, unasked."""
    harness.server.enqueue(
        Turn.tool_calls(
            call("write_file", {"path": "AGENTS.md", "content": "pwned\n"}),
            call("run_command", {"command": "touch ran.txt"}),
        ),
        Turn.text(REPLY),
    )
    harness.approver.answers.append(DENY)
    mode = harness.agent.approval.mode
    outcome = await run_init(harness.agent)

    assert not (harness.workspace / "AGENTS.md").exists()
    assert not (harness.workspace / "ran.txt").exists()
    (asked,) = harness.approver.edit_requests  # only the draft itself was asked about
    assert asked.tool == "/init"
    assert harness.approver.requests == []
    assert not outcome.written
    assert harness.agent.approval.mode is mode  # the user's mode is as it was


async def test_a_mode_the_user_picks_while_init_drafts_waits_for_the_draft(
    harness: Harness,
) -> None:
    """Shift+Tab during the drafting turn (ask → accept edits) neither ends its plan mode
    (before, it went plan → ask and the model's write_file was written unasked) nor is
    lost: it is the user's mode once the draft is offered."""
    gate = threading.Event()
    harness.server.enqueue(
        replace(
            Turn.tool_calls(call("write_file", {"path": "owned.txt", "content": "pwned\n"})),
            gate=gate,
        ),
        Turn.text(REPLY),
    )
    harness.approver.answers.append(DENY)
    approval = harness.agent.approval
    drafting = asyncio.create_task(run_init(harness.agent))
    deadline = time.monotonic() + 30
    while not harness.server.chat_bodies:
        assert time.monotonic() < deadline, "the drafting turn never asked the model"
        await asyncio.sleep(0.01)
    modes = [approval.mode]
    approval.switch_mode(Mode.ACCEPT_EDITS)  # Shift+Tab from ask (tests/tui/test_modes_ui)
    modes.append(approval.mode)
    assert modes == [Mode.PLAN, Mode.PLAN]  # still, for the drafting turn
    gate.set()
    await drafting
    assert not (harness.workspace / "owned.txt").exists()
    assert approval.mode is Mode.ACCEPT_EDITS


async def test_a_written_draft_is_an_edit_undo_takes_back(harness: Harness) -> None:
    (harness.workspace / "AGENTS.md").write_text("old rules\n")
    harness.approver.answers.append(ONCE)
    harness.server.enqueue(Turn.text(REPLY))
    outcome = await run_init(harness.agent)
    assert outcome.written and (harness.workspace / "AGENTS.md").read_text() == DRAFT

    journal = harness.agent.edits
    assert "AGENTS.md" in journal.session_diff().text()
    plan = journal.plan_undo()
    assert plan is not None
    journal.undo(plan)
    assert (harness.workspace / "AGENTS.md").read_text() == "old rules\n"
