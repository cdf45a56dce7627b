"""``/init``: the model drafts an AGENTS.md for the workspace, and the user decides.

A turn of its own asks the model to look at the repository (reading, listing,
searching) and to answer with the draft in one fenced block, writing nothing. The draft
is then shown as the change it would make (the edit dialog every front end already has:
the TUI's, an editor's permission request, ``--prompt``'s question) and written only
when the user says yes; an AGENTS.md already there is named as replaced, with the diff.
The instructions are read again after a write, so the next request follows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from zcoder.agent.instructions import INSTRUCTIONS_FILE
from zcoder.base.plural import byte_size, counted
from zcoder.tools.approval import ApprovalDecision, EditApprovalRequest
from zcoder.tools.change import FileChange
from zcoder.tools.confinement import ConfinementError, atomic_write, resolve_write_target
from zcoder.tools.diffs import file_diff
from zcoder.tools.edits import load_before
from zcoder.tools.modes import Mode
from zcoder.tools.offload import StopSignal, in_thread, to_completion
from zcoder.tools.profiles import TurnOrigin

if TYPE_CHECKING:
    from zcoder.agent.core import Agent

TOOL_NAME: Final = "/init"
MAX_DRAFT_BYTES: Final = 32 * 1024
"""A draft larger than the instructions' own limit would be cut when read: refused."""

INIT_PROMPT: Final = """\
Draft an {name} file for this repository: the instructions a coding agent needs to work \
here. Look at the repository first, reading only (list, read and search files; do not \
write, edit or run anything that changes files). Cover what is not obvious from the \
code: how to build, test and lint (the exact commands), the layout, conventions and \
anything to avoid. Be brief and specific: at most about 60 lines of Markdown.{existing}\
{focus}
Answer with the whole file in one fenced block (```markdown … ```) and nothing after it. \
Do not write the file: the user is shown your draft and decides."""
EXISTING: Final = (
    " An {name} is already there ({size}): read it and improve on it; the user sees the "
    "difference before anything is written."
)
_FENCE: Final = re.compile(
    r"^(`{3,}|~{3,})[ \t]*(?:markdown|md)?[ \t]*\n(.*?)^\1[ \t]*$", re.M | re.S
)


@dataclass(frozen=True)
class InitOutcome:
    """What became of the draft, in words for the user; ``written`` when it was."""

    text: str
    written: bool = False


def init_prompt(workspace: Path, focus: str = "") -> str:
    """The turn's prompt: the task, whether an AGENTS.md is there, the user's focus."""
    existing = ""
    target = workspace / INSTRUCTIONS_FILE
    if target.is_file():
        existing = EXISTING.format(name=INSTRUCTIONS_FILE, size=byte_size(target.stat().st_size))
    focus_text = f"\nThe user asks you to focus on: {focus.strip()}" if focus.strip() else ""
    return INIT_PROMPT.format(name=INSTRUCTIONS_FILE, existing=existing, focus=focus_text)


def draft_from(reply: str) -> str:
    """The draft in the model's reply: its last fenced block, else the reply itself."""
    blocks = _FENCE.findall(reply)
    text = blocks[-1][1] if blocks else reply
    return text.strip() + "\n" if text.strip() else ""


def last_reply(agent: Agent) -> str:
    for message in reversed(agent.messages):
        if message.get("role") == "assistant" and message.get("content"):
            return str(message["content"])
        if message.get("role") == "user":
            break
    return ""


async def run_init(agent: Agent, focus: str = "") -> InitOutcome:
    """``/init``: the drafting turn, then the draft offered; what became of it.

    The drafting turn runs in plan mode (tools/modes.py): the model reads and lists, and
    nothing changes before the user has seen the draft and said yes."""
    # For this turn only, whatever the user switches meanwhile (in force after it).
    with agent.approval.pinned(Mode.PLAN):
        finished = await agent.run_user_turn(init_prompt(agent.settings.workspace, focus))
    draft = draft_from(finished.response or last_reply(agent))
    if not draft:
        return InitOutcome(
            f"/init: the model wrote no draft, so no {INSTRUCTIONS_FILE} was written."
        )
    return await offer_draft(agent, draft)


async def offer_draft(agent: Agent, draft: str) -> InitOutcome:
    """Show ``draft`` as the change it makes to the workspace's AGENTS.md and write it
    only when the user approves (an existing file is said to be replaced)."""
    data = draft.encode()
    if len(data) > MAX_DRAFT_BYTES:
        return InitOutcome(
            f"/init: the draft is {byte_size(len(data))}, more than the instructions' "
            f"{byte_size(MAX_DRAFT_BYTES)}; nothing was written."
        )
    stop = StopSignal()
    try:
        target = resolve_write_target(agent.settings.workspace, INSTRUCTIONS_FILE)
        before, note = await in_thread(stop, lambda: load_before(target), name="init")
    except ConfinementError as exc:
        return InitOutcome(f"/init: {exc}; nothing was written.")
    if note:
        return InitOutcome(f"/init: the {INSTRUCTIONS_FILE} there is {note}; nothing was written.")
    if before == data:
        return InitOutcome(f"/init: {INSTRUCTIONS_FILE} already holds this draft.")
    replaces = before is not None
    if replaces:
        agent.recorder.notice(
            f"{INSTRUCTIONS_FILE} exists ({byte_size(len(before or b''))}): the draft would "
            "replace it. The question shows the difference."
        )
    diff = file_diff(target.display, before, data, clip=False)
    request = EditApprovalRequest(
        tool=TOOL_NAME,
        paths=(target.display,),
        diff="\n".join(diff.lines),
        allow_turn=False,
        origin=TurnOrigin.USER,
    )
    decision = await agent.approver.approve_edit(request)
    if decision is ApprovalDecision.DENY:
        return InitOutcome(
            f"/init: {INSTRUCTIONS_FILE} was not written (the draft is in the reply above)."
        )
    await to_completion(stop, lambda: atomic_write(target, data), name="init")
    change = FileChange(target, before, data)  # /undo takes it back, as a tool's edit
    await to_completion(stop, lambda: agent.edits.record_writes(TOOL_NAME, [change]), name="init")
    agent.settings.instruction_set = agent.settings.instruction_set.reloaded()
    verb = "Replaced" if replaces else "Wrote"
    lines = counted(draft.count("\n"), "line")
    return InitOutcome(f"{verb} {INSTRUCTIONS_FILE} ({lines}); the next request follows it.", True)
