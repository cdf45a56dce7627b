"""When to stop running relayed tasks without the user: one count for every front end.

Relayed turns run since the user last acted (a prompt, an answered dialog, ``/agents
continue``) are counted; at ``max_auto_turns`` (0: no limit) no further relayed message is
claimed until the user acts again, and the user is told once. A message a RelayMessage hook
refused or held before it ran costs nothing. Nothing is dropped: the messages wait in the
spool, where the relay's queue limit already bounds them. The TUI's ``TurnScheduler``
(tui/state/scheduler.py) and an editor's session (acp/relay.py) both count with this.
"""

from __future__ import annotations

from zcoder.relay import DEFAULT_MAX_AUTO_TURNS

__all__ = ["AutoTurns"]


class AutoTurns:
    def __init__(self, max_auto_turns: int = DEFAULT_MAX_AUTO_TURNS) -> None:
        if max_auto_turns < 0:
            raise ValueError("max_auto_turns is 0 (no limit) or more")
        self.max_auto_turns = max_auto_turns
        self.auto_turns = 0  # relayed turns started since the user last acted
        self._announced = False

    @property
    def limited(self) -> bool:
        """As many relayed turns ran without the user as the limit allows."""
        return self.max_auto_turns > 0 and self.auto_turns >= self.max_auto_turns

    def holding(self, oldest_waiting: int | None) -> bool:
        """Relayed messages wait for the user: they may not be claimed until the user acts."""
        return oldest_waiting is not None and self.limited

    def note_user_acted(self) -> None:
        self.auto_turns = 0
        self._announced = False

    def relay_started(self) -> None:
        self.auto_turns += 1

    def relay_not_run(self) -> None:
        """The relayed task started was held or refused before it ran (a RelayMessage
        hook): it costs no turn without the user."""
        self.auto_turns = max(0, self.auto_turns - 1)

    def should_announce(self, oldest_waiting: int | None) -> bool:
        """True once each time relayed messages start waiting for the user."""
        if not self.holding(oldest_waiting) or self._announced:
            return False
        self._announced = True
        return True
