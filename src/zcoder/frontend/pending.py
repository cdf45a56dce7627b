"""The user's input that waits for the agent: steering for the running turn, follow-ups
that run after it. One list, in the order typed, shared by every front end.

* ``steer(text)``: Enter while a turn runs. It reaches that turn at its next safe point
  (the agent takes it through ``take_steers``, zcoder.agent.steering); left when the turn
  ends without one (its reply had no tool calls), it is the next turn, before anything.
* ``follow_up(text)``: Ctrl+G (or Enter with the turn's queueing choice): a turn of its
  own, after the running one.
* ``drop(n)`` takes item n (1-based, as /queue numbers them) away; ``take_last`` takes the
  newest back to edit.
* ``held``: a stopped turn (Escape) or a session opened again after a crash leaves its
  input here and *held*: nothing of it runs, and no steer lands, until ``resume()``
  (``/queue resume``). Input typed afterwards goes on normally.

Every change is saved at once (``save``: the session store's ``replace_pending``), so a
crash or kill -9 loses nothing typed: the next open restores it held. A save that fails
(a full disk) keeps the input here and says so once through ``on_save_error``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from zcoder.agent import Steer
from zcoder.base.errors import UsageError
from zcoder.sessions import SessionStoreError

log = logging.getLogger(__name__)

__all__ = ["InputKind", "PendingInput", "PendingItem"]


class InputKind(StrEnum):
    STEER = "steer"
    FOLLOW_UP = "follow-up"


@dataclass(frozen=True)
class PendingItem:
    kind: InputKind
    text: str
    held: bool = False  # left by a stopped turn or a crash: runs only after resume()

    @property
    def label(self) -> str:
        """How /queue and the strip above the prompt name it."""
        word = "steering" if self.kind is InputKind.STEER else "follow-up"
        return f"{word} (held)" if self.held else word


Saver = Callable[[Sequence[tuple[str, str]]], None]


class PendingInput:
    """The waiting input of one session (see the module's docstring)."""

    def __init__(self, save: Saver | None = None) -> None:
        self._items: list[PendingItem] = []
        self._save = save
        self.on_change: Callable[[], None] = lambda: None
        """Called after every change (the TUI redraws the strip above its prompt)."""
        self.on_save_error: Callable[[str], None] = lambda _text: None
        """Told once when saving fails (the input stays here all the same)."""
        self._save_failed = False

    # -- what waits -----------------------------------------------------------------------

    def items(self) -> tuple[PendingItem, ...]:
        return tuple(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def held(self) -> bool:
        return any(item.held for item in self._items)

    def steering_left(self) -> bool:
        """Steering waits that may run now (none held): the next turn is made of it."""
        return any(i.kind is InputKind.STEER and not i.held for i in self._items)

    def follow_ups(self) -> list[str]:
        return [i.text for i in self._items if i.kind is InputKind.FOLLOW_UP and not i.held]

    # -- the user's doings ----------------------------------------------------------------

    def steer(self, text: str) -> PendingItem:
        return self._add(PendingItem(InputKind.STEER, text))

    def follow_up(self, text: str) -> PendingItem:
        return self._add(PendingItem(InputKind.FOLLOW_UP, text))

    def drop(self, number: int) -> PendingItem:
        """Take item ``number`` (1-based) away; a UsageError names the range otherwise."""
        if not 1 <= number <= len(self._items):
            have = f"1 to {len(self._items)}" if self._items else "nothing: the queue is empty"
            raise UsageError(f"no queued input number {number}; there is {have}")
        item = self._items.pop(number - 1)
        self._changed()
        return item

    def take_last(self) -> PendingItem | None:
        """The newest item, taken back to edit (Up in an empty prompt); None when empty."""
        if not self._items:
            return None
        item = self._items.pop()
        self._changed()
        return item

    def hold(self) -> None:
        """A turn was stopped: what waits stays, and runs only after ``resume``."""
        if self._items and not all(item.held for item in self._items):
            self._items = [PendingItem(i.kind, i.text, held=True) for i in self._items]
            self._changed()

    def resume(self) -> int:
        """``/queue resume``: what was held may run again; how many items that is."""
        count = sum(item.held for item in self._items)
        if count:
            self._items = [PendingItem(i.kind, i.text) for i in self._items]
            self._changed()
        return count

    def restore(self, saved: Sequence[tuple[str, str]]) -> None:
        """A session opened again: what it saved waits, held (nothing runs unasked)."""
        self._items = [PendingItem(InputKind(kind), text, held=True) for kind, text in saved]
        self.on_change()

    # -- what the agent and the scheduler take ---------------------------------------------

    def take_steers(self) -> list[Steer]:
        """Every steer that may run now, in order (the agent's SteerSource)."""
        taken = [i for i in self._items if i.kind is InputKind.STEER and not i.held]
        if not taken:
            return []
        self._items = [i for i in self._items if i.kind is not InputKind.STEER or i.held]
        self._changed()
        return [Steer(item.text) for item in taken]

    def pop_follow_up(self) -> str | None:
        """The oldest follow-up that may run now, taken; None when there is none."""
        for n, item in enumerate(self._items):
            if item.kind is InputKind.FOLLOW_UP and not item.held:
                del self._items[n]
                self._changed()
                return item.text
        return None

    # -- inside -----------------------------------------------------------------------------

    def _add(self, item: PendingItem) -> PendingItem:
        self._items.append(item)
        self._changed()
        return item

    def _changed(self) -> None:
        if self._save is not None:
            try:
                self._save([(item.kind.value, item.text) for item in self._items])
            except SessionStoreError as exc:
                log.warning("waiting input not saved: %s", exc)
                if not self._save_failed:
                    self._save_failed = True
                    self.on_save_error(f"the waiting input could not be saved: {exc}")
        self.on_change()
