"""The connection as the remote parts see it (remote/parts.py, remote/sessions.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from zcoder.base.ssh_target import Target
    from zcoder.remote.agent import RemoteAgent

__all__ = ["RemoteLink"]


@dataclass(eq=False)
class RemoteLink:
    """The connection as the parts see it: where to, the agent over it, and what the
    screen does when the user asks to connect again."""

    target: Target
    remote: RemoteAgent
    hostname: str
    reconnect: Callable[[], None]
    was_connected: bool = False
