"""Which turn runs next: the user's queued prompts and relayed tasks, and when to stop
running relayed tasks without the user.

Pure bookkeeping, no Textual and no relay: the app tells it what the relay's spool says
(the acceptance sequence of the oldest waiting message, and the last sequence accepted)
and starts whatever it answers.

Ordering. A prompt the user submits is queued with a *mark*: the last relay sequence
accepted at that moment. Relayed messages accepted before it (sequence <= mark) may run
before it; those accepted after it run after it. Several prompts run first in, first out.

Loops and floods: relayed turns run without the user are counted, and stop at a limit
until the user acts (zcoder.frontend.auto_turns, which an editor's session counts with too).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from zcoder.frontend.auto_turns import AutoTurns
from zcoder.relay import DEFAULT_MAX_AUTO_TURNS


class Next(Enum):
    """What the app should start now."""

    RELAY = "relay"  # claim the oldest relayed message and run it
    PROMPT = "prompt"  # run the oldest queued prompt (``pop_prompt``)


@dataclass(frozen=True)
class QueuedPrompt:
    text: str
    mark: int  # the last relay sequence accepted when it was queued


class TurnScheduler(AutoTurns):
    def __init__(self, max_auto_turns: int = DEFAULT_MAX_AUTO_TURNS) -> None:
        super().__init__(max_auto_turns)
        self._prompts: list[QueuedPrompt] = []
        self._recalled: int | None = None  # the mark of a prompt taken back to edit

    # -- the user's prompts ---------------------------------------------------------------

    def prompts(self) -> tuple[str, ...]:
        return tuple(p.text for p in self._prompts)

    def editing(self) -> bool:
        """A queued prompt was taken back into the input and not yet queued or dropped."""
        return self._recalled is not None

    def queue_prompt(self, text: str, *, last_accepted: int, oldest_waiting: int | None) -> None:
        """Queue the user's prompt behind the relayed messages accepted so far.

        Messages held back for the user (the limit was reached) do not go first: the user is
        here now. A prompt taken back with ``take_last`` keeps its place. Queuing a prompt is
        the user acting: the count of relayed turns starts again.
        """
        mark = last_accepted
        if self.holding(oldest_waiting) and oldest_waiting is not None:
            mark = min(mark, oldest_waiting - 1)
        if self._recalled is not None:
            mark = min(mark, self._recalled)
            self._recalled = None
        self._prompts.append(QueuedPrompt(text, mark))
        self.note_user_acted()

    def take_last(self) -> str | None:
        """Take the newest queued prompt back (to edit it); None when none is queued."""
        if not self._prompts:
            return None
        prompt = self._prompts.pop()
        self._recalled = prompt.mark if self._recalled is None else min(self._recalled, prompt.mark)
        return prompt.text

    def drop_recalled(self) -> bool:
        """The prompt taken back was cleared from the input: it is cancelled."""
        dropped = self._recalled is not None
        self._recalled = None
        return dropped

    def pop_prompt(self) -> str:
        return self._prompts.pop(0).text

    # -- the decision ---------------------------------------------------------------------

    def next_turn(self, oldest_waiting: int | None) -> Next | None:
        """What to start when idle. ``oldest_waiting`` is the acceptance sequence of the
        oldest relayed message that could be claimed now (None: none, or paused)."""
        relay_ready = oldest_waiting is not None and not self.limited
        if self._prompts:
            first = self._prompts[0]
            if relay_ready and oldest_waiting is not None and oldest_waiting <= first.mark:
                return Next.RELAY
            return Next.PROMPT
        return Next.RELAY if relay_ready else None
