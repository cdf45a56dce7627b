"""Which turn runs next: the user's waiting input (steering, follow-ups) and relayed
tasks, and when to stop running relayed tasks without the user.

Pure bookkeeping, no Textual and no relay: the app tells it what the relay's spool says
(the acceptance sequence of the oldest waiting message, and the last sequence accepted)
and starts whatever it answers. The user's input waits in one store, the session's
PendingInput (zcoder.frontend.pending): the scheduler keeps no list of its own, only each
follow-up's *mark* on its item.

Ordering. Steering left when a turn ended before a safe point (its reply had no tool
calls) is the next turn, before anything. A follow-up the user queues gets a *mark*: the
last relay sequence accepted at that moment. Relayed messages accepted before it
(sequence <= mark) may run before it; those accepted after it run after it. Several
follow-ups run first in, first out. Held input (a stopped turn's, a crashed run's) runs
only after ``/queue resume``, and holds nothing else up.

A goal (``/goal``, zcoder.frontend.goal) runs its turns only when none of the user's
input waits: what the user types goes first. Between a running goal and relayed tasks
the turns alternate: a relayed task waiting when a goal turn ends runs next, and the goal
turn after it, so neither starves the other.

Loops and floods: relayed turns run without the user are counted, and stop at a limit
until the user acts (zcoder.frontend.auto_turns, which an editor's session counts with too).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import Enum
from typing import Final

from zcoder.frontend.auto_turns import AutoTurns
from zcoder.frontend.pending import InputKind, PendingInput, PendingItem
from zcoder.relay import DEFAULT_MAX_AUTO_TURNS

_NO_MARK: Final = sys.maxsize


class Next(Enum):
    """What the app should start now."""

    RELAY = "relay"  # claim the oldest relayed message and run it
    PROMPT = "prompt"  # run the oldest follow-up (``pop_prompt``)
    STEER = "steer"  # the steering left by the last turn (``Agent.run_steered_turn``)
    GOAL = "goal"  # the next turn of the running goal (``goal_started`` when it starts)


class TurnScheduler(AutoTurns):
    def __init__(
        self, max_auto_turns: int = DEFAULT_MAX_AUTO_TURNS, *, pending: PendingInput | None = None
    ) -> None:
        super().__init__(max_auto_turns)
        self.pending = pending if pending is not None else PendingInput()
        self._recalled: int | None = None  # the mark of a follow-up taken back to edit
        self.goal_due: Callable[[], bool] = lambda: False  # a goal turn may run
        self._goal_went_last = False  # the last of a goal turn and a relayed task was the goal's

    # -- the user's prompts ---------------------------------------------------------------

    def prompts(self) -> tuple[str, ...]:
        """The follow-ups waiting (held ones too), oldest first."""
        kind = InputKind.FOLLOW_UP
        return tuple(i.text for i in self.pending.items() if i.kind is kind)

    def editing(self) -> bool:
        """A waiting input was taken back into the prompt and not yet sent or dropped."""
        return self._recalled is not None

    def queue_prompt(self, text: str, *, last_accepted: int, oldest_waiting: int | None) -> None:
        """Queue the user's follow-up behind the relayed messages accepted so far.

        Messages held back for the user (the limit was reached) do not go first: the user is
        here now. One taken back with ``take_last`` keeps its place. Queuing a prompt is
        the user acting: the count of relayed turns starts again.
        """
        mark = last_accepted
        if self.holding(oldest_waiting) and oldest_waiting is not None:
            mark = min(mark, oldest_waiting - 1)
        if self._recalled is not None:
            mark = min(mark, self._recalled)
            self._recalled = None
        self.pending.follow_up(text, mark=mark)
        self.note_user_acted()

    def steer(self, text: str) -> None:
        """The user's steering for the running turn (a recalled item is sent again)."""
        self._recalled = None
        self.pending.steer(text)
        self.note_user_acted()

    def take_last(self) -> PendingItem | None:
        """Take the newest waiting input back (to edit it); None when nothing waits."""
        item = self.pending.take_last()
        if item is not None:
            # A steer had no place among relayed tasks: sent again as a follow-up, it
            # takes a new one.
            mark = item.mark if item.kind is InputKind.FOLLOW_UP else _NO_MARK
            self._recalled = mark if self._recalled is None else min(self._recalled, mark)
        return item

    def drop_recalled(self) -> bool:
        """The input taken back was cleared from the prompt: it is cancelled."""
        dropped = self._recalled is not None
        self._recalled = None
        return dropped

    def pop_prompt(self) -> str:
        text = self.pending.pop_follow_up()
        assert text is not None  # next_turn said PROMPT
        return text

    def goal_started(self) -> None:
        self._goal_went_last = True

    def relay_started(self) -> None:
        self._goal_went_last = False
        super().relay_started()

    # -- the decision ---------------------------------------------------------------------

    def next_turn(self, oldest_waiting: int | None) -> Next | None:
        """What to start when idle. ``oldest_waiting`` is the acceptance sequence of the
        oldest relayed message that could be claimed now (None: none, or paused)."""
        if self.pending.steering_left():
            return Next.STEER
        relay_ready = oldest_waiting is not None and not self.limited
        kind = InputKind.FOLLOW_UP
        first = next((i for i in self.pending.items() if i.kind is kind and not i.held), None)
        if first is not None:
            if relay_ready and oldest_waiting is not None and oldest_waiting <= first.mark:
                return Next.RELAY
            return Next.PROMPT
        if self.goal_due() and not (relay_ready and self._goal_went_last):
            return Next.GOAL
        return Next.RELAY if relay_ready else None
