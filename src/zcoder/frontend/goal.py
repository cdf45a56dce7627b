"""The open session's goal (``/goal``), kept and saved at every change.

One ``GoalKeeper`` per front end holds the goal of the session open there (None: no
goal), saves it with the session at every change (``save``: the session store's
``save_state`` under ``"goal"``) and tells the front end (``on_change``: the header).
``switch`` is another session opened: the goal left stays saved with the one left; the
new one's comes back paused (zcoder.agent.goal.Goal.from_doc), so nothing runs by itself
after a restart or a resume. A save that fails keeps the goal here and says so once
through ``on_save_error``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from zcoder.agent.goal import Goal, GoalState, worked_in
from zcoder.base.sanitize import visible
from zcoder.sessions import SessionStoreError

if TYPE_CHECKING:
    from zcoder.model import Message

log = logging.getLogger(__name__)

__all__ = ["GOAL_KEY", "GoalKeeper"]

GOAL_KEY = "goal"
"""The session state's key of the goal (SessionStore.save_state)."""

Saver = Callable[[str, str, dict[str, Any] | None], None]
"""SessionStore.save_state: (session id, key, document or None)."""


class GoalKeeper:
    def __init__(self) -> None:
        self.goal: Goal | None = None
        self._save: Callable[[dict[str, Any] | None], None] | None = None
        self._save_failed = False
        self.on_change: Callable[[], object] = lambda: None
        self.on_save_error: Callable[[str], object] = lambda _text: None

    @property
    def due(self) -> bool:
        """A goal turn may run (the scheduler asks when nothing else waits)."""
        return self.goal is not None and self.goal.running

    def set(self, goal: Goal | None) -> None:
        """The goal is now ``goal`` (None: cleared): saved, shown."""
        self.goal = goal
        self.changed()

    def changed(self) -> None:
        """The goal changed in place: saved, shown."""
        if self._save is not None:
            try:
                self._save(None if self.goal is None else self.goal.to_doc())
            except SessionStoreError as exc:
                log.warning("the goal could not be saved: %s", exc)
                if not self._save_failed:
                    self._save_failed = True
                    self.on_save_error(f"the goal could not be saved with the session: {exc}")
            else:
                self._save_failed = False
        self.on_change()

    def only_in(self, kept: Sequence[Message], dropped: Sequence[Message]) -> bool:
        """Whether every turn of the goal is in ``dropped`` (none in ``kept``)."""
        goal = self.goal
        return goal is not None and worked_in(goal, dropped) and not worked_in(goal, kept)

    def rewound(self, kept: Sequence[Message], dropped: Sequence[Message]) -> str:
        """The conversation went back to ``kept``: a goal whose every turn was in
        ``dropped`` goes with them; what to tell the user ("" when it stays)."""
        goal = self.goal
        if goal is None or not self.only_in(kept, dropped):
            return ""
        self.set(None)
        return f"The goal set after it went too ({visible(goal.objective)})."

    def switch(self, save: Saver | None, session_id: str, state: dict[str, dict[str, Any]]) -> str:
        """Another session is open here (``state``: what it keeps besides its history):
        its saved goal, paused; what to tell the user ("" when it has none)."""
        self._save_failed = False
        self._save = None if save is None else (lambda doc: save(session_id, GOAL_KEY, doc))
        saved = state.get(GOAL_KEY)
        self.goal = None if saved is None else Goal.from_doc(saved)
        self.on_change()
        if saved is not None and self.goal is None:
            return "this session's saved goal could not be read; /goal OBJECTIVE starts one"
        if self.goal is None or self.goal.running or self.goal.state is GoalState.DONE:
            return ""
        return (
            f"This session's goal is paused: {self.goal.objective} — /goal resume goes on, "
            "/goal clear drops it."
        )
