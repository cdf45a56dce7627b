"""What this zcoder is doing, for its relay's manifest (issue 29): one object per front end.

The TUI and ACP feed it what they already know: a turn starting and ending, the agent's
events (a command running), a question waiting for the user, the relay's held count. It
keeps the one activity those add up to (``zcoder.relay``'s words: waiting for approval,
running a command, thinking, holding N messages, idle, first match wins) and tells the
relay only when that changes, never per streamed token, so the manifest is rewritten a
few times a turn at most.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, assert_never

from zcoder.agent import events as ev
from zcoder.agent.status import ContextUsage
from zcoder.relay import (
    ACTIVITY_IDLE,
    ACTIVITY_RUNNING_COMMAND,
    ACTIVITY_THINKING,
    ACTIVITY_WAITING_FOR_APPROVAL,
    holding,
)

if TYPE_CHECKING:
    from zcoder.relay import Relay


class ActivityTracker:
    """``relay_of`` gives the relay to tell (None while it has not started: the activity
    is told once it has)."""

    def __init__(self, relay_of: Callable[[], Relay | None]) -> None:
        self._relay_of = relay_of
        self._in_turn = False
        self._commands: set[str] = set()  # running commands by call id
        self._asking = 0  # questions open (a dialog, a permission request)
        self._held = 0
        self._told = ""

    @property
    def activity(self) -> str:
        if self._asking:
            return ACTIVITY_WAITING_FOR_APPROVAL
        if self._commands:
            return ACTIVITY_RUNNING_COMMAND
        if self._in_turn:
            return ACTIVITY_THINKING
        return holding(self._held) if self._held else ACTIVITY_IDLE

    def turn_started(self) -> None:
        self._in_turn = True
        self.publish()

    def turn_ended(self) -> None:
        self._in_turn, self._asking = False, 0
        self._commands.clear()
        self.publish()

    def asking(self, open_: bool) -> None:
        """A question to the user opened (True) or was answered or closed (False)."""
        self._asking = max(0, self._asking + (1 if open_ else -1))
        self.publish()

    def held(self, count: int) -> None:
        """Messages held for the user's decision (``/agents held``)."""
        self._held = max(0, count)
        self.publish()

    def on_event(self, event: ev.AgentEvent) -> None:
        """The agent's events: a command starts or ends; a turn's end."""
        match event:
            case ev.ToolStarted(name="run_command"):
                self._commands.add(event.call_id)
            case ev.UserCommandStarted():
                self._commands.add(event.command_id)
            case ev.ToolFinished():
                self._commands.discard(event.call_id)
            case ev.UserCommandFinished():
                self._commands.discard(event.command_id)
            case ev.TurnFinished():
                self._in_turn = False
                self._commands.clear()
            case ev.ToolStarted() | ev.StatusChanged() | ev.TextEvent() | ContextUsage():
                return  # a stream of these is the same activity: nothing to tell
            case ev.AssistantMessage() | ev.ToolOutput() | ev.RelayReceived() | ev.PlanChanged():
                return
            case ev.SubagentProgress():
                return  # the task call it belongs to is the activity
            case _:
                assert_never(event)
        self.publish()

    def publish(self) -> None:
        """Tell the relay, when there is one and the activity changed since it was told."""
        activity = self.activity
        relay = self._relay_of()
        if relay is None or activity == self._told:
            return
        self._told = activity
        relay.set_activity(activity)
