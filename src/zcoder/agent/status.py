"""What the header shows of the agent: its status and how full the context window is.

Apart from the other events (zcoder.agent.events, which re-exports both) so the first
frame can draw the header without importing them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["ContextUsage", "Status"]


class Status(StrEnum):
    """The header's status badge."""

    READY = "Ready"
    WARMING_UP = "Warming Up"
    THINKING = "Thinking"
    TOOL = "Tool"
    STOPPED = "Stopped"
    ERROR = "Error"
    BLOCKED = "Blocked"
    LOOP_STOPPED = "Loop stopped"
    INCOMPLETE = "Incomplete"


@dataclass(frozen=True)
class ContextUsage:
    """How full the context window is: the tokens of the last request and its reply.

    ``measured`` when the server counted them (prompt_eval_count + eval_count, or the
    OpenAI form's usage); an estimate otherwise (before the first response).
    """

    used: int
    window: int | None
    measured: bool

    @property
    def percent(self) -> int | None:
        if not self.window:
            return None
        return min(999, round(100 * self.used / self.window))
