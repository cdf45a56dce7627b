"""What the store hands back: plain frozen records, no connection attached."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

EventRole = Literal["user", "assistant", "tool", "system", "error", "relay", "receipt"]
EVENT_ROLES: tuple[EventRole, ...] = get_args(EventRole)

ToolStatus = Literal["running", "completed", "failed", "interrupted"]
TOOL_RUNNING: ToolStatus = "running"
TOOL_INTERRUPTED: ToolStatus = "interrupted"
STATUS_KEY = "status"  # where a tool event's metadata keeps its ToolStatus

Message = dict[str, Any]
"""One Ollama chat message (role, content, tool_calls, tool_name, thinking, ...)."""

Metadata = dict[str, Any]
"""JSON-compatible metadata of a transcript event (tool name, call id, arguments, status...)."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    workspace: str
    profile: str
    model: str
    title: str
    created_at: float
    updated_at: float
    one_shot: bool = False  # made by `zcoder --prompt`: left out of the interactive list


@dataclass(frozen=True, slots=True)
class TranscriptEvent:
    id: int
    session_id: str
    seq: int  # 1, 2, 3... in the order appended to this session
    role: EventRole
    text: str
    metadata: Metadata
    created_at: float


@dataclass(frozen=True, slots=True)
class SessionData:
    info: SessionInfo
    messages: list[Message]
    user_ledger: list[str]  # exactly what the user typed, in order
    events: list[TranscriptEvent]
    # The user's input that was waiting when last saved: (kind, text), kind "steer" or
    # "follow-up" (zcoder.frontend.pending), in order.
    pending: list[tuple[str, str]] = field(default_factory=list)
    # What the session keeps besides its history, by key (SessionStore.save_state).
    state: dict[str, dict[str, Any]] = field(default_factory=dict)
