"""A goal's turn and what follows it, for any front end: the turn (a user-origin turn that
begins with the goal's record, zcoder.agent.goal.worker_record, and ends at the budget
left), then, when the model ended it with ``finish``, the independent check
(zcoder.agent.goal_check): accepted, the goal is done; sent back, its reasons go into the
next turn's record. Every token the server counts for the turn and the check is the
goal's; the budget, the turn limit, a blocked or failed turn, a stop or a failed check
pause it. What it has to say goes to ``notice``; ``checking`` is called as the check
starts (the TUI's header badge).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from zcoder.agent.events import Outcome
from zcoder.agent.goal import Goal, GoalState, worker_record
from zcoder.agent.goal_check import check_goal
from zcoder.base.sanitize import visible

if TYPE_CHECKING:
    from zcoder.agent import Agent, TurnFinished
    from zcoder.frontend.goal import GoalKeeper
    from zcoder.model import ToolCall

__all__ = ["GoalRunner"]

SHOWN_CHARS: Final = 300
"""How much of an objective, a reason or a response a notice shows."""


@dataclass
class GoalRunner:
    keeper: GoalKeeper
    notice: Callable[[str], object]
    checking: Callable[[], object] = lambda: None

    async def turn(self, agent: Agent, *, ended: Callable[[], object] = lambda: None) -> None:
        """The running goal's next turn, and its check if the model called ``finish``;
        ``ended`` is called once the turn itself is over (before the check)."""
        goal = self.keeper.goal
        if goal is None or not goal.running:
            return
        record = worker_record(goal)
        goal.turns += 1
        self.keeper.changed()  # counted and shown now; a crash in it counts it too
        self.notice(f"◎ Goal turn {goal.turns}: {visible(_cut(goal.objective))}")
        before, why = agent.meter.spent, "the turn failed unexpectedly"
        try:
            left = max(0, goal.budget - goal.spent)
            finished = await agent.run_goal_turn(record, token_limit=left)
            goal.spent += agent.meter.spent - before
            before = agent.meter.spent
            ended()
            why = await self._after(goal, agent, finished)
        except asyncio.CancelledError:
            why = "the turn was stopped"
            raise
        finally:  # a failed turn is shown by the front end; the goal does not loop on it
            goal.spent += agent.meter.spent - before
            self._ended(goal, why)

    def _ended(self, goal: Goal, why: str) -> None:
        """The goal paused for ``why`` ("": it goes on), or at its limits; saved."""
        if goal.running and not why:
            why = goal.over_budget()
        if goal.running and why:
            goal.pause(why)
            self.notice(f"⏸ Goal paused: {visible(why)}. /goal status, /goal resume.")
        if self.keeper.goal is goal:  # not cleared while the turn ran
            self.keeper.changed()

    async def _after(self, goal: Goal, agent: Agent, finished: TurnFinished) -> str:
        """What the turn's end means for the goal: why it pauses ("" when it goes on)."""
        if self.keeper.goal is not goal:
            return ""
        if finished.outcome is Outcome.BLOCKED:
            return f"the model says it is blocked: {_cut(finished.response or finished.error)}"
        if finished.outcome is Outcome.ERROR:
            return f"the turn failed: {_cut(finished.error)}"
        if finished.called_finish and finished.outcome is Outcome.COMPLETE:
            return await self._check(goal, agent, finished.response)
        return ""

    async def _check(self, goal: Goal, agent: Agent, result: str) -> str:
        """The independent check of the goal's work; why the goal pauses ("": it goes on,
        or it is done)."""
        self.checking()
        self.notice("◎ The check reads the changes (a fresh context, read-only tools)…")
        journal = agent.edits
        diff = await asyncio.to_thread(journal.session_diff, goal.since_turn)
        verdict = await check_goal(
            agent.client,
            agent.settings,
            objective=goal.objective,
            diff="\n".join(line for d in diff.diffs for line in d.lines),
            result=result,
            on_call=self._show_call,
        )
        goal.spent += verdict.tokens
        reasons = visible(_cut(verdict.reasons))
        if verdict.failed:
            return f"the check could not be made: {verdict.reasons}"
        if verdict.accepted:
            goal.state, goal.note, goal.feedback = GoalState.DONE, verdict.reasons, ""
            self.notice(f"✓ Goal done: the check accepted it: {reasons}")
            return ""
        goal.rejections += 1
        goal.feedback = verdict.reasons
        self.notice(f"✗ The check sent the goal back: {reasons}")
        return ""

    def _show_call(self, call: ToolCall) -> None:
        what = " ".join(f"{value}" for value in call.arguments.values() if isinstance(value, str))
        self.notice(f"  check: {visible(call.name)} {visible(_cut(what, 80))}")


def _cut(text: str, width: int = SHOWN_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
