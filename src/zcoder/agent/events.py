"""What the agent tells its front end. The TUI, --prompt mode and tests all consume these.

The agent never imports a UI: it calls one ``on_event`` callback with these records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from zcoder.agent.status import ContextUsage, Status

if TYPE_CHECKING:
    from zcoder.relay import Envelope
    from zcoder.tools.plan import Plan


class Outcome(StrEnum):
    """How a turn ended."""

    COMPLETE = "complete"
    BLOCKED = "blocked"
    INCOMPLETE = "incomplete"
    LOOP_STOPPED = "loop_stopped"
    STOPPED = "stopped"
    ERROR = "error"

    @property
    def badge(self) -> Status:
        """The header's badge once a turn has ended so (the agent's and a remote's)."""
        return _BADGES[self]


_BADGES: Final = {
    Outcome.COMPLETE: Status.READY,
    Outcome.BLOCKED: Status.BLOCKED,
    Outcome.INCOMPLETE: Status.INCOMPLETE,
    Outcome.LOOP_STOPPED: Status.LOOP_STOPPED,
    Outcome.STOPPED: Status.STOPPED,
    Outcome.ERROR: Status.ERROR,
}


@dataclass(frozen=True)
class StatusChanged:
    status: Status
    detail: str = ""  # the tool name for Status.TOOL


@dataclass(frozen=True)
class TextEvent:
    """An event that carries only text; each subclass says what the text is."""

    text: str


class AssistantDelta(TextEvent):
    """A piece of the reply, as it streams."""


class ThinkingDelta(TextEvent):
    """A piece of the model's reasoning, as it streams."""


@dataclass(frozen=True)
class AssistantMessage:
    """A whole assistant reply; ``partial`` when the turn was stopped while it streamed.

    ``streamed`` says whether its text already went out as AssistantDelta events (a
    finish response did not). The text may differ from what streamed: a tool call or
    reasoning the model wrote as text is taken out of it (zcoder.model.recovery), and an
    empty ``text`` says that nothing of what streamed was a reply.
    """

    text: str
    partial: bool = False
    streamed: bool = True


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolFinished:
    call_id: str
    name: str
    status: str  # completed, failed, interrupted, not_executed
    output: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolOutput:
    """Output a running command printed since the last ToolOutput of the same call (or
    user command): decoded text, not necessarily whole lines. Front ends batch these."""

    call_id: str
    text: str


@dataclass(frozen=True)
class UserCommandStarted:
    """The user typed ``!command``: it runs now, without approval and without a turn."""

    command_id: str
    command: str


@dataclass(frozen=True)
class UserCommandFinished:
    """A user command ended; ``output`` ends with its status line (``[exit code 0]``...),
    as the conversation records it. ``status``: completed, failed or interrupted."""

    command_id: str
    command: str
    status: str
    output: str
    exit_code: int | None = None


class UserSteered(TextEvent):
    """The user's words that reached the running turn at a safe point (steering), now in
    the history right after the last tool result (zcoder.agent.steering)."""


class Notice(TextEvent):
    """A system notice for the transcript (nudges, loop warnings, retries)."""


class ErrorNotice(TextEvent):
    """An error for the transcript; the turn may go on or end with it."""


@dataclass(frozen=True)
class RelayReceived:
    """A relayed task is about to run as this turn, or (``steered``) a trusted peer's
    message reached the running turn at a safe point (zcoder.agent.steering)."""

    sender_project: str
    sender_pid: int
    sender_workspace: str
    sender_instance_id: str
    body: str
    # How the receiver knows the sender (zcoder.relay.standing): "instance", "send" or
    # "unverified"; "" for a message stored before standings were recorded.
    sender_kind: str = ""
    steered: bool = False

    @classmethod
    def from_envelope(cls, envelope: Envelope, *, steered: bool = False) -> RelayReceived:
        """The event for ``envelope``: its fields of the same names."""
        names = (each.name for each in fields(cls) if each.name != "steered")
        return cls(**{name: getattr(envelope, name) for name in names}, steered=steered)


@dataclass(frozen=True)
class PlanChanged:
    """The conversation's plan is now ``plan`` (the model's update_plan, or a session
    opened with one saved; an empty plan: none). Its transcript entry is the call's."""

    plan: Plan


@dataclass(frozen=True)
class SubagentProgress:
    """A subagent the task tool runs (its call ``call_id``) moved on: ``step`` is what it
    does now (a tool call's heading, "waiting for a slot", "writing its report"), with
    the requests it made and the tokens they cost so far. Its entry is the call's."""

    call_id: str
    step: str
    turns: int
    tokens: int


@dataclass(frozen=True)
class TurnFinished:
    outcome: Outcome
    response: str = ""
    error: str = ""
    called_finish: bool = False  # the model ended it with ``finish`` (a goal's check follows)


AgentEvent = (
    StatusChanged
    | AssistantDelta
    | ThinkingDelta
    | AssistantMessage
    | ToolStarted
    | ToolFinished
    | ToolOutput
    | UserCommandStarted
    | UserCommandFinished
    | UserSteered
    | Notice
    | ErrorNotice
    | RelayReceived
    | ContextUsage
    | PlanChanged
    | SubagentProgress
    | TurnFinished
)

EventSink = Callable[[AgentEvent], None]
