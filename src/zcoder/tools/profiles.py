"""Who a turn is for (its origin) and how careful the agent must be (its profile)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Profile", "TurnOrigin"]


class TurnOrigin(StrEnum):
    """Where the current turn came from."""

    USER = "user"
    """Typed by the local user."""
    RELAY = "relay"
    """Relayed by another zcoder process: a request, never authority."""
    STEERED = "steered"
    """A turn a peer's message reached while it ran (zcoder.agent.steering): relayed, and
    more: every command and edit asks, naming the sender, whatever ``--yes``, ``a``, a
    hook or the edit setting said."""

    @property
    def relayed(self) -> bool:
        """Whether another process's words are in this turn (a relayed or steered one)."""
        return self is not TurnOrigin.USER


class Profile(StrEnum):
    """The agent profile chosen at start (``--profile``)."""

    CODING = "coding"
    SYSADMIN = "sysadmin"
