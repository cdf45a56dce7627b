"""ACP session updates from a remote zcoder, as the agent events the TUI already draws.

This is the other half of zcoder.acp.updates: that module turns the agent's events into
session updates on the remote host; this one turns them back here, so everything above the
event sink (tui/parts/agent_view.py, the transcript, the header) is the same code whether the
agent runs in this process or over SSH. What zcoder's agent side encodes, it decodes:
notices and errors travel as agent messages in one recognisable form, and the user's
steering as a user message marked as such (shown as steering where it landed); a tool call's
``raw_output`` carries zcoder's own status (``interrupted``, ``not_executed``); a command's
output arrives as the whole tail so far with every update (ACP replaces a call's content),
so only what is new is passed on as ToolOutput. A tool call that starts already finished
is one replayed by ``session/load``.

It knows nothing of SSH or of the screen: updates in, events out (and the user's own
messages, which the TUI shows itself rather than as agent events).
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, assert_never

from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    FileEditToolCallContent,
    SessionInfoUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from zcoder.acp.updates import STEERING_HEAD
from zcoder.agent import events as ev
from zcoder.agent.headings import tool_from_heading
from zcoder.agent.status import ContextUsage, Status
from zcoder.agent.steering import STEERED_KEY
from zcoder.tools.plan import Plan, PlanError

_NOTICE: Final = re.compile(r"\A\n\n_zcoder: (?P<text>.*)_\n\n\Z", re.DOTALL)
_ERROR: Final = re.compile(r"\A\n\n\*\*zcoder: (?P<text>.*)\*\*\n\n\Z", re.DOTALL)
_FINAL: Final = ("completed", "failed")

RemoteUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AgentPlanContentUpdate
    | AgentPlanRemovedUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)
"""What a ``session/update`` notification carries (acp.schema.SessionNotification.update)."""


def tool_name(kind: str | None, title: str) -> str:
    """zcoder's name for a remote tool call, from its kind and title (the title's verb
    names a built-in tool: zcoder.agent.headings); an MCP tool's title is kept whole."""
    if kind == "execute":
        return "run_command"
    return tool_from_heading(title) or title or "tool"


def text_of(content: Any) -> str:
    """The text blocks of a tool call's content, joined."""
    parts = []
    for item in content or []:
        if getattr(item, "type", None) == "content" and isinstance(item.content, TextContentBlock):
            parts.append(item.content.text)
    return "\n".join(parts)


def diff_of(content: Any) -> str:
    """The unified diff of the edits in a tool call's content."""
    lines: list[str] = []
    for item in content or []:
        if isinstance(item, FileEditToolCallContent):
            lines += difflib.unified_diff(
                (item.old_text or "").splitlines(keepends=True),
                item.new_text.splitlines(keepends=True),
                fromfile=f"a/{item.path}",
                tofile=f"b/{item.path}",
            )
    return "".join(lines)


def new_output(before: str, now: str) -> str:
    """What ``now`` (the output's tail so far) adds to ``before`` (the last tail).

    Once the output outgrows the tail the agent sends (64 KiB), ``now`` no longer starts
    with ``before``: the end of ``before`` is looked for in ``now``. Output that repeats
    itself can fool that look; it only shows while the command runs, since the finished
    call carries its whole output."""
    if now.startswith(before):
        return now[len(before) :]
    size = min(256, len(before))
    while size:
        found = now.rfind(before[-size:])
        overlap = found + size
        if found >= 0 and now[:overlap] == before[-overlap:]:
            return now[overlap:]
        size //= 2
    return now


@dataclass
class _ReportedCall:
    name: str
    arguments: dict[str, Any]
    output: str = ""


@dataclass
class UpdateReader:
    """One remote session's updates → agent events (``emit``); the user's own messages →
    ``on_user``. Stateful: the reply being written, the calls running."""

    emit: Callable[[ev.AgentEvent], None]
    on_user: Callable[[str], None]
    calls: dict[str, _ReportedCall] = field(default_factory=dict)
    reply: str = ""
    last_reply: str | None = None
    """The last whole reply (``/copy``)."""

    def running_commands(self) -> list[str]:
        """The commands of the run_command calls that have not finished."""
        return [
            str(call.arguments.get("command", ""))
            for call in self.calls.values()
            if call.name == "run_command"
        ]

    def __call__(self, update: RemoteUpdate) -> None:
        match update:
            case AgentMessageChunk():
                self._message(update)
            case AgentThoughtChunk():
                if isinstance(update.content, TextContentBlock) and update.content.text:
                    self.emit(ev.ThinkingDelta(update.content.text))
            case UserMessageChunk():
                self.end_reply()
                if isinstance(update.content, TextContentBlock):
                    self._user(update)
            case ToolCallStart():
                self._started(update)
            case ToolCallProgress():
                self._progress(update)
            case UsageUpdate():
                self.emit(ContextUsage(used=update.used, window=update.size or None, measured=True))
            case AgentPlanUpdate():
                self._plan(update)
            case (
                AgentPlanContentUpdate()
                | AgentPlanRemovedUpdate()
                | AvailableCommandsUpdate()
                | CurrentModeUpdate()
                | ConfigOptionUpdate()
                | SessionInfoUpdate()
            ):
                pass  # zcoder's agent sends none the TUI shows
            case _:
                assert_never(update)

    def _plan(self, update: AgentPlanUpdate) -> None:
        """The remote model's plan (zcoder.acp.updates.plan_update), for the sidebar."""
        items = [{"text": entry.content, "status": entry.status} for entry in update.entries]
        with contextlib.suppress(PlanError):  # not a plan zcoder sent: nothing to show
            self.emit(ev.PlanChanged(Plan.from_arguments(items)))

    def _user(self, update: UserMessageChunk) -> None:
        """The user's words: steering where it landed (marked so in ``_meta``, headed so
        in its text: zcoder.acp.updates.steering_message), else a message of theirs."""
        assert isinstance(update.content, TextContentBlock)
        text = update.content.text
        marked = (update.field_meta or {}).get("zcoder", {})
        if (isinstance(marked, dict) and marked.get(STEERED_KEY)) or text.startswith(STEERING_HEAD):
            self.emit(ev.UserSteered(text.removeprefix(STEERING_HEAD)))
        else:
            self.on_user(text)

    def _message(self, update: AgentMessageChunk) -> None:
        if not isinstance(update.content, TextContentBlock):
            return
        text = update.content.text
        if found := _NOTICE.match(text):
            self.end_reply()
            self.emit(ev.Notice(found["text"]))
        elif found := _ERROR.match(text):
            self.end_reply()
            self.emit(ev.ErrorNotice(found["text"]))
        elif text:
            self.reply += text
            self.emit(ev.AssistantDelta(text))

    def restart(self) -> None:
        """Another session is loaded: what was being written, and the calls running,
        were the previous one's."""
        self.reply = ""
        self.calls.clear()

    def end_reply(self, *, partial: bool = False) -> None:
        """The reply written so far is whole (a tool call, a notice or the end follows)."""
        if self.reply:
            text, self.reply = self.reply, ""
            self.last_reply = text
            self.emit(ev.AssistantMessage(text, partial=partial))

    def _started(self, update: ToolCallStart) -> None:
        self.end_reply()
        name = tool_name(update.kind, update.title)
        raw = update.raw_input if isinstance(update.raw_input, dict) else {}
        arguments = dict(raw)
        if name == "run_command" and "command" not in arguments:
            arguments["command"] = update.title
        self.calls[update.tool_call_id] = _ReportedCall(name, arguments)
        self.emit(ev.ToolStarted(update.tool_call_id, name, arguments))
        if update.status in _FINAL:  # a call replayed by session/load
            self._finished(update.tool_call_id, update.status, update.content, update.raw_output)
        else:
            self.emit(ev.StatusChanged(Status.TOOL, name))

    def _progress(self, update: ToolCallProgress) -> None:
        call_id = update.tool_call_id
        call = self.calls.get(call_id)
        if call is None:
            return
        if update.status in _FINAL:
            self._finished(call_id, update.status, update.content, update.raw_output)
            return
        if update.content and call.name == "run_command":
            now = text_of(update.content)
            new = new_output(call.output, now)
            call.output = now
            if new:
                self.emit(ev.ToolOutput(call_id, new))

    def _finished(self, call_id: str, status: str, content: Any, raw_output: Any) -> None:
        call = self.calls.pop(call_id, None)
        name = call.name if call is not None else "tool"
        output = text_of(content)
        if isinstance(raw_output, dict):
            status = str(raw_output.get("status") or status)
            output = str(raw_output.get("output", output))
        metadata: dict[str, Any] = {}
        if diff := diff_of(content):
            metadata["diff"] = diff
        self.emit(ev.ToolFinished(call_id, name, status, output, metadata))
        self.emit(ev.StatusChanged(Status.THINKING))

    def interrupted(self, why: str) -> list[str]:
        """The connection is gone: every running call ends as interrupted (its command is
        not run again here or there); returns the commands that were running."""
        commands = self.running_commands()
        self.end_reply(partial=True)
        for call_id in list(self.calls):
            call = self.calls.pop(call_id)
            self.emit(ev.ToolFinished(call_id, call.name, "interrupted", why))
        return commands

    def turn_ended(self, outcome: ev.Outcome, error: str = "") -> ev.TurnFinished:
        self.end_reply(partial=outcome is ev.Outcome.STOPPED)
        finished = ev.TurnFinished(outcome, error=error)
        self.emit(ev.StatusChanged(outcome.badge))
        self.emit(finished)
        return finished
