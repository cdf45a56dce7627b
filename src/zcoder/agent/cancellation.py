"""A stopped turn's tidy-up: the history stays consistent whichever await was cancelled.

A partial reply is shown and saved as partial, never sent back to the model; the tool call
that was running is answered as interrupted, with the output it printed until then (a
command's), and every other unanswered call of the round as not executed, so each call in
the history has its result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zcoder.agent.events import ToolFinished
from zcoder.agent.live_output import LiveOutput
from zcoder.agent.prompts import NOT_EXECUTED
from zcoder.agent.recorder import Recorder
from zcoder.model import AssistantReply, Message, ToolCall, tool_result_message

STOPPED_KEY = "stopped"
"""Marks the saved note "Stopped." (its metadata key)."""


@dataclass
class RoundState:
    """What a cancellation must tidy up."""

    reply: AssistantReply | None = None
    calls: list[ToolCall] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)
    running: dict[str, tuple[ToolCall, int | None, LiveOutput]] = field(default_factory=dict)
    """The calls running now (several when they run at once: ToolSpec.concurrent), by id:
    the call, its saved event and what it printed so far."""
    held: dict[str, str] = field(default_factory=dict)
    """Results of calls that ran at once, kept until all of them end, to be answered in
    the order of the calls."""

    def answer(self, messages: list[Message], call: ToolCall, output: str) -> None:
        """The call's result enters the history; the call counts as answered."""
        messages.append(tool_result_message(call, output))
        self.answered.add(call.id)


def tidy_after_cancel(state: RoundState, messages: list[Message], recorder: Recorder) -> None:
    """Leave history consistent after the turn's task was cancelled at any await."""
    if state.reply is not None and state.reply.content.strip():
        # A partial reply is shown and saved as partial, never sent back to the model.
        recorder.assistant(state.reply.content, partial=True)
    for call in state.calls:
        if call.id in state.answered:
            continue
        if call.id in state.held:  # it ended before the stop: its result stands
            state.answer(messages, call, state.held.pop(call.id))
        elif call.id in state.running:
            _call, event_id, output = state.running.pop(call.id)
            result = output.interrupted()
            recorder.update_event(
                event_id,
                result,
                {
                    "name": call.name,
                    "call_id": call.id,
                    "arguments": dict(call.arguments),
                    "status": "interrupted",
                },
            )
            state.answer(messages, call, result)
            recorder.emit(ToolFinished(call.id, call.name, "interrupted", result))
        else:
            state.answer(messages, call, NOT_EXECUTED)
            recorder.event(
                "tool",
                NOT_EXECUTED,
                {
                    "name": call.name,
                    "call_id": call.id,
                    "arguments": dict(call.arguments),
                    "status": "interrupted",
                    "not_executed": True,
                },
            )
            recorder.emit(ToolFinished(call.id, call.name, "not_executed", NOT_EXECUTED))
    # For the TUI's transcript; a front end that showed the stop its own way (an editor
    # told "cancelled") leaves it out when it shows the session again.
    recorder.event("system", "Stopped.", {STOPPED_KEY: True})
