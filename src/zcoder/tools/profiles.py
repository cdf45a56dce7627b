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


class Profile(StrEnum):
    """The agent profile chosen at start (``--profile``)."""

    CODING = "coding"
    SYSADMIN = "sysadmin"
