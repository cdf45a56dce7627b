"""zcoder's approval questions as ACP permission requests, with the same content and rules.

The agent asks its front end through the approver protocol (zcoder.tools.Approver):
``approve_command`` and ``approve_edit``. Here each question becomes one
``session/request_permission`` about the tool call the client already knows (the pump is
flushed first): the whole command with its directory, the guard's warning and, for a
relayed task, who sent it; for an edit, the diff of each file. The options are the TUI's:
allow once, allow always only where the TUI offers ``a`` (``request.allow_always`` /
``allow_turn``, so a relayed turn asks for every command, and a command the guard refuses
is never offered it), and reject. The rules
themselves stay in zcoder.tools.approval: this module only asks. A message the model
wants to send to another zcoder (the relay) is asked the same way: the exact instance and
the whole message, allow once or reject.

Whatever is not a clear yes is a no: an answer of "cancelled", an option that was not
offered, a malformed answer, a client that is gone (the pending request fails when the
connection closes). Nothing runs without permission. A question whose answer is kept for
later sessions (``request.kept``: consent to a project's MCP server) is different only in
what is saved: a dismissed request, or one that failed, is no answer at all, so
``approve_command`` raises (``NotAnswered``) and the caller saves nothing and asks again
next time; only the user's "Reject" is kept as a refusal.

``ReportingJournal`` is the session's edit journal that also tells the update stream
which files an edit tool wrote, with their text before and after, so the editor gets a
real diff (the tool's own result keeps only a short preview).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from acp import text_block, tool_content, update_tool_call
from acp.helpers import ToolCallContentVariant
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from zcoder.acp.permission import PermissionAsker
from zcoder.acp.updates import EventTranslator, FileEdit, UpdatePump
from zcoder.agent.edits import EditJournal
from zcoder.base.sanitize import visible, visible_lines
from zcoder.relay import name_of, paused_warning, peer_label, steer_note
from zcoder.tools import (
    ApprovalDecision,
    CommandApprovalRequest,
    EditApprovalRequest,
    EditPolicy,
    FileChange,
    ToolContext,
)

if TYPE_CHECKING:
    from zcoder.relay import Peer

log = logging.getLogger(__name__)

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"


def fenced(text: str) -> str:
    """``text`` as a Markdown code block, which keeps its lines in clients that render
    Markdown (a fence longer than any run of backticks inside it)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def paragraphs(*parts: str) -> str:
    """Paragraphs, which a Markdown client shows on lines of their own."""
    return "\n\n".join(part for part in parts if part)


class NotAnswered(Exception):
    """The client dismissed the permission request (or could not be asked): no answer."""


def file_edits(changes: Sequence[FileChange]) -> list[FileEdit]:
    """The text files of ``changes`` (a binary file has no text diff to show)."""
    edits = []
    for change in changes:
        before, after = change.before, change.after or b""
        if b"\0" in after or (before is not None and b"\0" in before):
            continue
        old = None if before is None else before.decode("utf-8", errors="replace")
        edits.append(FileEdit(change.target.absolute, old, after.decode("utf-8", "replace")))
    return edits


class ReportingJournal(EditJournal):
    """The edit journal, telling ``on_commit`` what each write changed.

    ``committed`` runs in the worker thread that wrote the files (zcoder.tools.offload);
    ``on_commit`` must only record, not touch the event loop.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        home: Path | None,
        policy: EditPolicy,
        on_commit: Callable[[list[FileEdit]], None],
    ) -> None:
        super().__init__(workspace, home=home, policy=policy)
        self._on_commit = on_commit
        self.reviewing: list[FileEdit] = []
        """The edits being asked about (ZCODER_EDITS=ask), for the permission request."""

    async def review(self, tool: str, changes: Sequence[FileChange], ctx: ToolContext) -> str:
        self.reviewing = file_edits(changes)
        try:
            return await super().review(tool, changes, ctx)
        finally:
            self.reviewing = []

    def committed(
        self, tool: str, changes: Sequence[FileChange], _ctx: ToolContext | None = None
    ) -> None:
        super().committed(tool, changes)
        self._on_commit(file_edits(changes))


@dataclass(eq=False)
class AcpApprover:
    """Asks the client; see the module's docstring for what counts as a yes."""

    session_id: str
    client: PermissionAsker
    pump: UpdatePump
    translator: EventTranslator
    journal: Callable[[], ReportingJournal | None]
    # Told when a question opens (True) and closes: peers see "waiting for approval".
    asking: Callable[[bool], None] = lambda _open: None

    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        where = "in the background (it keeps running) " if request.background else ""
        lines = [f"Run this command {where}in {request.cwd}?", fenced(f"$ {request.command}")]
        if request.web_host is not None:  # fetch_url: "always" allows this host only
            lines = ["Fetch this web page?", fenced(request.command)]
            if request.allow_always:
                lines.append(f"Allow always: pages of {request.web_host} for the rest of the run.")
        if request.helper is not None:  # another coding agent: asked every time
            lines[0] = f"Hand this task to {request.helper}, in {request.cwd}?"
        if request.requested_by:
            lines.insert(0, f"Asked by a task relayed {request.requested_by}.")
        if request.warning:
            said = "refused by the safety guard" if request.refused else "warning"
            lines.append(f"{said}: {request.warning}")
        if request.refused:
            lines.append("Asked every time: allow it only if you mean it to run, this once.")
        call_id = self.translator.running_call or "run_command"
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=request.command,
            kind="execute" if request.web_host is None else "fetch",
            status="pending",
            content=[tool_content(text_block(paragraphs(*lines)))],
            raw_input={
                "command": request.command,
                "cwd": str(request.cwd),
                "timeout_seconds": request.timeout_seconds,
                "warning": request.warning,
                "refused": request.refused,
                "requested_by": request.requested_by,
                "kept": request.kept,  # --connect's dialog: no answer when it cannot ask
            }
            | ({"background": True} if request.background else {})
            | ({"web_host": request.web_host} if request.web_host is not None else {})
            | ({"helper": request.helper} if request.helper is not None else {}),
        )
        decision = await self._ask(tool_call, offer_always=request.allow_always)
        if decision is None:
            if request.kept:  # nothing may be saved that the user never said
                raise NotAnswered("the editor dismissed the question; nothing was saved")
            decision = ApprovalDecision.DENY
        if decision is not ApprovalDecision.DENY:
            self.pump.put([update_tool_call(call_id, status="in_progress")])
        return decision

    async def approve_edit(self, request: EditApprovalRequest) -> ApprovalDecision:
        journal = self.journal()
        edits = journal.reviewing if journal is not None else []
        content: list[ToolCallContentVariant] = [edit.content() for edit in edits]
        if not content:  # binary files: the unified diff zcoder shows is all there is
            content = [tool_content(text_block(request.diff))]
        heading = f"{request.tool} wants to change {', '.join(request.paths)}"
        if request.requested_by:
            heading = f"Asked by a task relayed {request.requested_by}: {heading}"
        call_id = self.translator.running_call or request.tool
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=heading,
            kind="edit",
            status="pending",
            content=content,
            raw_input={"tool": request.tool, "paths": list(request.paths)},
        )
        decision = await self._ask(tool_call, offer_always=request.allow_turn)
        if decision is None:
            return ApprovalDecision.DENY
        if decision is not ApprovalDecision.DENY:
            self.pump.put([update_tool_call(call_id, status="in_progress")])
        return decision

    async def confirm_send(self, peer: Peer, message: str, *, steer: bool = False) -> bool:
        """The relay's send confirmation (zcoder.agent.relay_tools.SendConfirmer): the
        exact instance the message goes to and the whole message; allow once or not."""
        where = f"{peer_label(peer)} (pid {peer.pid}, {visible(peer.workspace)})"
        lines = [f"Send this message to {where}, instance {visible(peer.instance_id)}?"]
        if steer:
            lines.append(steer_note(peer))
        if warning := paused_warning(peer):
            lines.append(f"Warning: {warning}")
        lines.append(fenced(visible_lines(message)))
        tool_call = ToolCallUpdate(
            tool_call_id=self.translator.running_call or "send_agent_message",
            title=f"Send a message to {visible(name_of(peer))}",
            kind="other",
            status="pending",
            content=[tool_content(text_block(paragraphs(*lines)))],
            raw_input={"target_instance_id": peer.instance_id, "message": message},
        )
        return await self._ask(tool_call, offer_always=False) is ApprovalDecision.ONCE

    async def _ask(
        self, tool_call: ToolCallUpdate, *, offer_always: bool
    ) -> ApprovalDecision | None:
        """The client's answer; None when it gave none (dismissed, failed, gone)."""
        options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
        if offer_always:
            options.append(
                PermissionOption(option_id=ALLOW_ALWAYS, name="Allow always", kind="allow_always")
            )
        options.append(PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"))
        # The client must know the call before it is asked about it.
        await self.pump.flush()
        self.asking(True)
        try:
            response = await self.client.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=options
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - no answer is a refusal, never a crash
            log.info("permission request failed (%s): denied", exc)
            return None
        finally:
            self.asking(False)
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome):
            return None
        if outcome.option_id == ALLOW_ONCE:
            return ApprovalDecision.ONCE
        if outcome.option_id == ALLOW_ALWAYS and offer_always:
            return ApprovalDecision.ALWAYS
        return ApprovalDecision.DENY
