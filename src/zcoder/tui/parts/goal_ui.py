"""GoalUI: ``/goal`` and the goal's turns in the TUI.

``/goal OBJECTIVE`` sets the open session's goal (``Services.goal``, a GoalKeeper,
zcoder.frontend.goal); the scheduler then names a goal turn (``Next.GOAL``) whenever
nothing the user typed waits, alternating with relayed tasks (tui/state/scheduler.py),
and ``turn`` is its body: a user-origin turn that begins with the goal's record
(zcoder.agent.goal.worker_record). When the model ends one with ``finish``, the
independent check runs in the same worker (zcoder.agent.goal_check): accepted, the goal is
done; sent back, its reasons go into the next turn's record. Every token the server
counts for the turns and the checks is the goal's; its budget, its turn limit, Escape,
a blocked or failed turn, or a failed check pause it. The header shows it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from zcoder.agent.events import Outcome
from zcoder.agent.goal import Goal, GoalState, parse_goal_args, worker_record
from zcoder.agent.goal_check import check_goal
from zcoder.base.errors import UsageError
from zcoder.base.sanitize import visible
from zcoder.slash.declared import GoalCommands
from zcoder.tui.parts.services import Part

if TYPE_CHECKING:
    from zcoder.agent import Agent, TurnFinished
    from zcoder.frontend.goal import GoalKeeper
    from zcoder.model import ToolCall
    from zcoder.tui.parts.model_ui import ModelUI
    from zcoder.tui.parts.sessions_ui import SessionsUI

__all__ = ["CHECKING", "GoalUI"]

CHECKING = "Checking goal"
"""The header's badge while the check runs."""
SHOWN_CHARS = 300


@dataclass(eq=False)
class GoalUI(Part, GoalCommands):
    _: KW_ONLY
    model: ModelUI
    sessions: SessionsUI
    schedule: Callable[[], None]
    """The screen's: start the next turn when idle (a goal's, now it may run)."""

    @property
    def keeper(self) -> GoalKeeper:
        return self.services.goal

    def show_header(self) -> None:
        goal = self.keeper.goal
        self.say.header(goal=("", "") if goal is None else goal.badge())

    # -- /goal ------------------------------------------------------------------------

    def goal_command(self, argument: str, /) -> None:
        try:
            args = parse_goal_args(argument)
        except UsageError as exc:
            self.say.error(str(exc))
            return
        goal = self.keeper.goal
        if args.action == "start":
            self._start(args.objective, args.tokens)
        elif args.action == "status":
            none = "No goal. /goal OBJECTIVE sets one."
            self.say.notice(none if goal is None else goal.status_text())
        elif goal is None:
            self.say.error(f"there is no goal to {args.action}; /goal OBJECTIVE sets one")
        elif args.action == "clear":
            self.keeper.set(None)
            running = " The running turn goes on; Escape stops it." if self.services.busy() else ""
            self.say.notice(f"Goal cleared.{running}")
        elif args.action == "pause":
            if not goal.running:
                self.say.notice(f"The goal is {goal.state.value} already.")
                return
            goal.pause("paused with /goal pause")
            self.keeper.changed()
            after = " after the running turn (Escape stops it now)" if self.services.busy() else ""
            self.say.notice(f"Goal paused{after}. /goal resume goes on.")
        else:  # resume
            self._resume(goal, args.tokens)

    def _start(self, objective: str, tokens: int | None) -> None:
        agent = self.services.agent
        if agent is None:
            self.say.error("zcoder is still starting; set the goal again in a moment")
            return
        old = self.keeper.goal
        if old is not None and old.state is not GoalState.DONE:
            self.say.error(
                f"a goal is {old.state.value} already ({visible(old.objective)}): /goal clear drops"
                " it first, /goal resume goes on with it"
            )
            return
        goal = Goal(objective, since_turn=agent.edits.turn)
        if tokens is not None:
            goal.budget = tokens
        self.keeper.set(goal)
        self.say.notice(
            f"Goal set: {visible(objective)}\nzcoder works on it turn after turn (your prompts go"
            f" first) until it calls finish and a read-only check accepts it; at most "
            f"{goal.turn_limit} turns and {goal.budget:,} tokens. /goal pause, Escape or "
            "/goal clear stop it."
        )
        self.schedule()

    def _resume(self, goal: Goal, tokens: int | None) -> None:
        if goal.running:
            self.say.notice("The goal is running.")
            return
        if why := goal.resume(tokens):
            self.say.error(why)
            return
        self.keeper.changed()
        self.say.notice(f"Goal resumed: {visible(goal.objective)}")
        self.schedule()

    def stopped(self) -> None:
        """Escape stopped a turn: a running goal pauses (whichever turn that was)."""
        goal = self.keeper.goal
        if goal is not None and goal.running:
            goal.pause("stopped with Escape")
            self.keeper.changed()
            self.say.notice("Goal paused (Escape). /goal resume goes on.")

    # -- a goal's turn (the scheduler's Next.GOAL) ----------------------------------------

    async def turn(self) -> None:
        goal, agent = self.keeper.goal, self.services.agent
        if goal is None or not goal.running or agent is None:
            return
        await self.model.window_ready()
        record = worker_record(goal)
        goal.turns += 1
        self.keeper.changed()  # the header counts it now; a crash in it counts it too
        self.say.notice(f"◎ Goal turn {goal.turns}: {visible(_cut(goal.objective))}")
        before, why = agent.meter.spent, "the turn failed unexpectedly"
        try:
            left = max(0, goal.budget - goal.spent)
            finished = await agent.run_goal_turn(record, token_limit=left)
            goal.spent += agent.meter.spent - before
            before = agent.meter.spent
            self.model.check_allocation()
            self.sessions.refresh()
            why = await self._after(goal, agent, finished)
        except asyncio.CancelledError:
            why = "the turn was stopped"
            raise
        finally:  # a failed turn is shown by the screen; the goal does not loop on it
            goal.spent += agent.meter.spent - before
            self._ended(goal, why)

    def _ended(self, goal: Goal, why: str) -> None:
        """The goal paused for ``why`` ("": it goes on), or at its limits; saved."""
        if goal.running and not why:
            why = goal.over_budget()
        if goal.running and why:
            goal.pause(why)
            self.say.notice(f"⏸ Goal paused: {visible(why)}. /goal status, /goal resume.")
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
        self.say.header(status=CHECKING)
        self.say.notice("◎ The check reads the changes (a fresh context, read-only tools)…")
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
            self.say.notice(f"✓ Goal done: the check accepted it. {reasons}")
            return ""
        goal.rejections += 1
        goal.feedback = verdict.reasons
        self.say.notice(f"✗ The check sent the goal back: {reasons}")
        return ""

    def _show_call(self, call: ToolCall) -> None:
        what = " ".join(f"{value}" for value in call.arguments.values() if isinstance(value, str))
        self.say.notice(f"  check: {visible(call.name)} {visible(_cut(what, 80))}")


def _cut(text: str, width: int = SHOWN_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
