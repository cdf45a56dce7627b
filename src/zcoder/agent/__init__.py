"""The agent: turns with an origin (user or relay) and one common execution body.

It talks to its front end through events (zcoder.agent.events) and an approver
(zcoder.tools.Approver), never through a UI import.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

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
        UserSteered,
    )
    from zcoder.agent.instructions import (
        InstructionSet,
        describe_instructions,
        load_instructions,
        render_instructions,
    )
    from zcoder.agent.prompts import system_prompt
    from zcoder.agent.relay_tools import (
        RELAY_SENDER_KEY,
        ConfirmationUnavailable,
        SendConfirmer,
        discovery_text,
        register_relay_tools,
    )
    from zcoder.agent.settings import AgentSettings
    from zcoder.agent.status import ContextUsage, Status
    from zcoder.agent.steering import STEERED_KEY, Steer, SteerSource, SteerSources
    from zcoder.agent.team_tool import SPAWN_AGENT, register_spawn_tool

# The names above are the whole face: each is imported from its module when first
# used (zcoder.base.lazy), so a caller that needs one light name does not pay for the
# whole package at start-up.
__getattr__, __dir__, __all__ = face(__name__, __file__)
