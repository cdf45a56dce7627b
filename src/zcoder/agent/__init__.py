"""The agent: turns with an origin (user or relay) and one common execution body.

It talks to its front end through events (zcoder.agent.events) and an approver
(zcoder.tools.Approver), never through a UI import.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import lazy_exports

if TYPE_CHECKING:
    from zcoder.agent.core import Agent, ChatClient
    from zcoder.agent.events import (
        AgentEvent,
        AssistantDelta,
        AssistantMessage,
        ErrorNotice,
        EventSink,
        Notice,
        Outcome,
        RelayReceived,
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
    from zcoder.agent.settings import AgentSettings
    from zcoder.agent.status import ContextUsage, Status

# Each name is imported from its module when first used (PEP 562), so a caller that
# needs one light name does not pay for the whole package at start-up.
__getattr__ = lazy_exports(
    __name__,
    {
        "Agent": "core",
        "AgentSettings": "settings",
        "ChatClient": "core",
        "AgentEvent": "events",
        "AssistantDelta": "events",
        "AssistantMessage": "events",
        "ContextUsage": "status",
        "ErrorNotice": "events",
        "EventSink": "events",
        "Notice": "events",
        "Outcome": "events",
        "RelayReceived": "events",
        "Status": "status",
        "StatusChanged": "events",
        "ThinkingDelta": "events",
        "ToolFinished": "events",
        "ToolOutput": "events",
        "ToolStarted": "events",
        "TurnFinished": "events",
        "UserCommandFinished": "events",
        "UserCommandStarted": "events",
        "load_instructions": "instructions",
        "render_instructions": "instructions",
        "system_prompt": "prompts",
        "RELAY_SENDER_KEY": "relay_tools",
        "ConfirmationUnavailable": "relay_tools",
        "SendConfirmer": "relay_tools",
        "discovery_text": "relay_tools",
        "register_relay_tools": "relay_tools",
        "relay_wrapper": "relay_wrapper",
    },
)

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
