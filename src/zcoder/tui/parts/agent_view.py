"""The agent's events drawn in the transcript: streamed replies, thinking, tool entries.

One object per app keeps what is being streamed (the reply, the model's reasoning, the
running tool entries) and turns each AgentEvent into a transcript entry or an update of
one. It knows nothing of dialogs, sessions or the relay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

from zcoder.agent import events as ev
from zcoder.agent.status import ContextUsage, Status
from zcoder.tools.plan import Plan
from zcoder.tui.parts.services import Part, PartContext
from zcoder.tui.widgets.plan_view import tool_entry
from zcoder.tui.widgets.status import RUNNING_COMMAND, WAITING_FOR_MODEL, WRITING_REPLY
from zcoder.tui.widgets.subagent_entry import SubagentEntry
from zcoder.tui.widgets.transcript import (
    AssistantEntry,
    CommandEntry,
    Entry,
    ToolEntry,
    error_text,
    relay_text,
    system_text,
    thinking_text,
    user_text,
)


def badge_label(event: ev.StatusChanged) -> str:
    """What the header's badge says for the agent's status: what is happening now. The
    agent says THINKING when it sends a request; until the model streams something that
    is waiting (ThinkingDelta and AssistantDelta then say Thinking or Writing reply)."""
    if event.status is Status.THINKING:
        return WAITING_FOR_MODEL
    if event.status is Status.TOOL:
        # run_command, or the user's !command (the agent calls it "shell").
        commands = ("run_command", "shell")
        return RUNNING_COMMAND if event.detail in commands else f"Tool: {event.detail}"
    return event.status.value


class AgentView(Part):
    """Turns agent events into transcript entries; ``show`` adds one to the transcript
    (at once: the screen's own call); the header's badge and meter are told by ``say``,
    the model's plan to the sidebar's section by ``show_plan``."""

    def __init__(
        self,
        context: PartContext,
        *,
        show: Callable[[Entry], Entry],
        show_plan: Callable[[Plan], None],
    ) -> None:
        super().__init__(context)
        self.show = show
        self.show_plan = show_plan
        self._stream_entry: AssistantEntry | None = None
        self._stream_text = ""
        # The model's reasoning is shown while it streams and removed when the reply (or a
        # tool call) starts: it is not part of the transcript that is saved and reloaded.
        self._thinking_entry: Entry | None = None
        self._thinking_text = ""
        self._tool_entries: dict[str, ToolEntry] = {}
        # Running commands (run_command calls and the user's !commands) by call id.
        self._commands: dict[str, CommandEntry] = {}

    def set_status(self, status: str) -> None:
        self.say.header(status=status)

    def set_usage(self, usage: ContextUsage) -> None:
        self.say.header(context=usage)

    def reset(self) -> None:
        """Forget what was streaming (the transcript was cleared for another session)."""
        self._stream_entry, self._stream_text = None, ""
        self._thinking_entry, self._thinking_text = None, ""
        self._tool_entries.clear()
        self._commands.clear()

    def on_event(self, event: ev.AgentEvent) -> None:
        self.services.activity.on_event(event)  # a command runs, a turn ends: for peers
        if not isinstance(event, ev.ThinkingDelta | ContextUsage | ev.StatusChanged):
            self._end_thinking()  # the reasoning is over once anything else comes
        match event:
            case ev.ThinkingDelta():
                self.set_status(Status.THINKING.value)  # only while reasoning streams
                self._thinking_text += event.text
                if self._thinking_entry is None:
                    self._thinking_entry = self.show(
                        Entry("thinking", thinking_text(self._thinking_text))
                    )
                else:
                    self._thinking_entry.show_text(thinking_text(self._thinking_text))
            case ContextUsage():
                self.set_usage(event)
            case ev.StatusChanged():
                self.set_status(badge_label(event))
            case ev.AssistantDelta():
                self.set_status(WRITING_REPLY)
                self._stream_text += event.text
                if self._stream_entry is None:
                    self._stream_entry = AssistantEntry(self._stream_text, streaming=True)
                    self.show(self._stream_entry)
                else:
                    self._stream_entry.stream(self._stream_text)
            case ev.AssistantMessage():
                if not event.text.strip():
                    # What streamed was a tool call or reasoning written as text: not a reply.
                    if event.streamed and self._stream_entry is not None:
                        self._stream_entry.remove()
                elif event.streamed and self._stream_entry is not None:
                    self._stream_entry.finish(event.text, partial=event.partial)
                else:
                    self.show(AssistantEntry(event.text, partial=event.partial))
                self._end_stream()
            case ev.ToolOutput():
                command = self._commands.get(event.call_id)
                if command is not None:
                    command.append(event.text)
            case ev.UserCommandStarted():
                self._end_stream()
                self._commands[event.command_id] = CommandEntry.for_user(event.command)
                self.show(self._commands[event.command_id])
            case ev.UserCommandFinished():
                command = self._commands.pop(event.command_id, None)
                if command is None:
                    command = CommandEntry.for_user(event.command, event.status)
                    self.show(command)
                command.finish(event.status, event.output)
            case ev.ToolStarted(name="run_command" | "delegate_task"):  # output streams in
                self._end_stream()
                self._commands[event.call_id] = CommandEntry.for_tool(event.name, event.arguments)
                self.show(self._commands[event.call_id])
            case ev.ToolStarted():
                self._end_stream()
                entry = tool_entry(event.name, event.arguments)
                self.show(entry)
                self._tool_entries[event.call_id] = entry
            case ev.ToolFinished() if event.call_id in self._commands:
                status = "interrupted" if event.status == "not_executed" else event.status
                self._commands.pop(event.call_id).finish(status, event.output)
            case ev.ToolFinished():
                status = "interrupted" if event.status == "not_executed" else event.status
                known = self._tool_entries.pop(event.call_id, None)
                diff = str(event.metadata.get("diff") or "")  # an edit's diff (tools/edits.py)
                if known is None:
                    known = tool_entry(event.name, {}, status)
                    self.show(known)
                if isinstance(known, SubagentEntry):
                    known.take(event.metadata)
                known.finish(status, event.output, diff)
            case ev.Notice():
                self.show(Entry("system", system_text(event.text)))
            case ev.ErrorNotice():
                self._end_stream()
                self.show(Entry("error", error_text(event.text)))
            case ev.UserSteered():
                self._end_stream()
                self.show(Entry("user", user_text(event.text, steering=True)))
            case ev.RelayReceived():
                self._end_stream()
                self.show(
                    Entry(
                        "relay",
                        relay_text(
                            event.sender_project,
                            event.sender_pid,
                            event.sender_workspace,
                            event.sender_instance_id,
                            event.body,
                            kind=event.sender_kind,
                            steered=event.steered,
                        ),
                    )
                )
            case ev.PlanChanged():
                self.show_plan(event.plan)
            case ev.SubagentProgress():
                running = self._tool_entries.get(event.call_id)
                if isinstance(running, SubagentEntry):
                    running.progress(event.step, event.turns, event.tokens)
            case ev.TurnFinished():
                self._end_stream()
            case _:
                assert_never(event)

    def _end_thinking(self) -> None:
        if self._thinking_entry is not None:
            self._thinking_entry.remove()
            self._thinking_entry, self._thinking_text = None, ""

    def _end_stream(self) -> None:
        if self._stream_entry is not None:
            self._stream_entry.flush()
        self._stream_entry, self._stream_text = None, ""
