"""The agent: turns with an origin (user or relay) and one common execution body.

It talks to its front end through events (zcoder.agent.events) and an approver
(zcoder.tools.Approver), never through a UI import.
"""

from zcoder.agent.core import Agent, AgentSettings, ChatClient
from zcoder.agent.events import (
    AgentEvent,
    AssistantDelta,
    AssistantMessage,
    ContextUsage,
    ErrorNotice,
    EventSink,
    Notice,
    Outcome,
    RelayReceived,
    Status,
    StatusChanged,
    ThinkingDelta,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnFinished,
    UserCommandFinished,
    UserCommandStarted,
)
from zcoder.agent.instructions import load_instructions, render_instructions
from zcoder.agent.prompts import system_prompt
from zcoder.agent.relay_tools import (
    RELAY_SENDER_KEY,
    ConfirmationUnavailable,
    SendConfirmer,
    discovery_text,
    register_relay_tools,
)
from zcoder.agent.relay_wrapper import relay_wrapper

__all__ = [
    "RELAY_SENDER_KEY",
    "Agent",
    "AgentEvent",
    "AgentSettings",
    "AssistantDelta",
    "AssistantMessage",
    "ChatClient",
    "ConfirmationUnavailable",
    "ContextUsage",
    "ErrorNotice",
    "EventSink",
    "Notice",
    "Outcome",
    "RelayReceived",
    "SendConfirmer",
    "Status",
    "StatusChanged",
    "ThinkingDelta",
    "ToolFinished",
    "ToolOutput",
    "ToolStarted",
    "TurnFinished",
    "UserCommandFinished",
    "UserCommandStarted",
    "discovery_text",
    "load_instructions",
    "register_relay_tools",
    "relay_wrapper",
    "render_instructions",
    "system_prompt",
]
