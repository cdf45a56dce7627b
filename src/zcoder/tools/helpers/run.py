"""Asking the user, then running a helper agent on a task in the workspace.

A helper runs with its own permissions, outside zcoder's guard and approvals, so it is
asked about every time, with its exact command line: no ``--yes``, no earlier ``a`` and no
hook's allow answers for the user, and an approver that cannot ask (``--prompt --yes``, an
editor that does not answer) refuses it. ``--deny-commands`` and plan mode refuse it
without asking.

It runs like a command (zcoder.tools.command.run_shell: its own process group, stdin
closed, killed as a group on its time limit or when the user stops it). Its JSON event
stream is read line by line (zcoder.tools.helpers.clis) into lines a person reads, which go
to ``on_output`` as they come. The workspace is looked at before and after
(zcoder.tools.helpers.workspace): what it changed is handed to ``record`` (the edit
journal, for /diff and /undo), also when it was stopped.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.tools.approval import ApprovalDecision, CommandApprovalRequest, CommandPolicy
from zcoder.tools.base import ToolContext
from zcoder.tools.change import FileChange
from zcoder.tools.command import OutputSink, run_shell
from zcoder.tools.helpers.clis import Helper, HelperReading
from zcoder.tools.helpers.workspace import WorkspaceState, changes_since
from zcoder.tools.modes import Mode
from zcoder.tools.offload import StopSignal, in_thread, to_completion
from zcoder.tools.output import bound_text

__all__ = [
    "HelperOutcome",
    "authorize_helper",
    "command_line",
    "own_permissions",
    "run_helper",
]

MAX_LINE_CHARS: Final = 1024 * 1024
"""A longer output line (a huge event) is shown cut, never held whole."""
CUT_LINE_CHARS: Final = 4096
"""How much of such a line is shown."""


def own_permissions(helper: Helper) -> str:
    """What the question says of a helper: the user is trusting it, not zcoder's guard."""
    return f"{helper.title} runs with its own permissions, outside zcoder's guard and approvals"


def command_line(helper: Helper, task: str) -> str:
    """The exact command line that runs (through bash, in the workspace)."""
    return shlex.join(helper.argv(helper.name, task))


async def authorize_helper(
    helper: Helper, task: str, ctx: ToolContext, timeout: float
) -> str | None:
    """None when the user said yes to running ``helper`` on ``task``, else why not."""
    policy = ctx.approval
    if policy.policy is CommandPolicy.DENY:
        return "commands are disabled in this session (--deny-commands): no helper runs"
    if policy.mode is Mode.PLAN:
        return (
            f"plan mode is read-only and {helper.title} could change anything; the user "
            "can hand it the task after accepting the plan"
        )
    request = CommandApprovalRequest(
        command_line(helper, task),
        ctx.workspace,
        timeout,
        allow_always=False,
        origin=ctx.origin,
        profile=ctx.profile,
        warning=own_permissions(helper),
        requested_by=ctx.requested_by,
        helper=helper.title,
    )
    try:
        decision = await ctx.approver.approve_command(request)
    except Exception as exc:  # noqa: BLE001 - nobody could be asked: refused
        return f"the user could not be asked ({exc}); {helper.title} was not started"
    if decision is ApprovalDecision.DENY:
        return f"the user said no; {helper.title} was not started"
    return None


@dataclass(frozen=True)
class HelperOutcome:
    """How a helper's run ended and what it did."""

    helper: Helper
    answer: str
    exit_code: int | None
    timed_out: bool
    failed: str
    changed: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.failed

    def status(self, timeout: float) -> str:
        """The last line: how it ended and the files it changed."""
        title = self.helper.title
        if self.timed_out:
            said = f"{title} timed out after {timeout:g} s; it and its processes were killed"
        else:
            said = f"{title} exit code {self.exit_code}"
        if self.changed:
            said += f"; {counted(len(self.changed), 'file')} changed: " + ", ".join(self.changed)
        else:
            said += "; no files changed"
        return f"[{said}]"

    def text(self, timeout: float, limit: int) -> str:
        """The result: the helper's final answer, then the status line."""
        body = self.answer or (f"(no answer: {self.failed})" if self.failed else "(no answer)")
        return f"{bound_text(body.strip(), limit)}\n{self.status(timeout)}"


class _Lines:
    """Output chunks → whole lines → what a person reads, to ``sink``. A line longer than
    MAX_LINE_CHARS is shown cut, and the rest of it is dropped as it comes."""

    def __init__(self, helper: Helper, reading: HelperReading, sink: OutputSink | None) -> None:
        self.helper = helper
        self.reading = reading
        self.sink = sink
        self.pending = ""
        self.cutting = False  # the rest of a line already shown cut

    def feed(self, text: str) -> None:
        if self.cutting:
            _, newline, text = text.partition("\n")
            self.cutting = not newline
        self.pending += text
        *whole, self.pending = self.pending.split("\n")
        for line in whole:
            self._show(line)
        if len(self.pending) > MAX_LINE_CHARS:
            self._show(self.pending[:CUT_LINE_CHARS] + " … (line cut)")
            self.pending, self.cutting = "", True

    def flush(self) -> None:
        if self.pending:
            self._show(self.pending)
            self.pending = ""

    def _show(self, line: str) -> None:
        shown = self.helper.read_line(line, self.reading)
        if shown and self.sink is not None:
            self.sink("".join(visible(text) + "\n" for text in shown))


async def run_helper(
    helper: Helper,
    task: str,
    ctx: ToolContext,
    timeout: float,
    record: Callable[[Sequence[FileChange]], None],
) -> HelperOutcome:
    """Run ``helper`` on ``task`` (already approved) in ``ctx``'s workspace, its lines to
    ``ctx.on_output``; see the module docstring. Re-raises ``asyncio.CancelledError`` once
    its group is gone and its changes are recorded."""
    workspace = ctx.workspace
    stop = StopSignal()
    before = await in_thread(stop, lambda: WorkspaceState.take(workspace, stop), name="helper")
    reading = HelperReading()
    lines = _Lines(helper, reading, ctx.on_output)
    changed: tuple[str, ...] = ()
    try:
        shell = command_line(helper, task)
        outcome = await run_shell(shell, workspace, timeout, ctx.max_output, lines.feed)
    finally:
        lines.flush()
        done = StopSignal()
        changes = await to_completion(done, lambda: changes_since(before), name="helper")
        if changes:
            await to_completion(done, lambda: record(changes), name="helper")
        changed = tuple(change.path for change in changes)
    return HelperOutcome(
        helper,
        reading.final(),
        outcome.exit_code,
        outcome.timed_out,
        reading.failed,
        changed,
    )
