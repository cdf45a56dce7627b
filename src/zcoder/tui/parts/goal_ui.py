"""GoalUI: ``/goal`` and the goal's turns in the TUI.

``/goal OBJECTIVE`` sets the open session's goal (``Services.goal``, a GoalKeeper,
zcoder.frontend.goal); the scheduler then names a goal turn (``Next.GOAL``) whenever
nothing the user typed waits, alternating with relayed tasks (tui/state/scheduler.py),
and ``turn`` is its body: a user-origin turn that begins with the goal's record
(zcoder.agent.goal.worker_record). When the model ends one with ``finish``, the
independent check runs in the same worker: what a goal turn does is the front end's
GoalRunner's (zcoder.frontend.goal_run); here is the command, Escape (which pauses a
running goal, whatever turn it stopped) and the header, which shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from zcoder.agent.goal import Goal, GoalState, parse_goal_args, plan_mode_refusal
from zcoder.base.errors import UsageError
from zcoder.base.sanitize import visible
from zcoder.frontend.goal_run import GoalRunner
from zcoder.slash.declared import GoalCommands
from zcoder.tui.parts.services import Part
from zcoder.tui.widgets.status import CHECKING_GOAL

if TYPE_CHECKING:
    from zcoder.frontend.goal import GoalKeeper
    from zcoder.tui.parts.model_ui import ModelUI
    from zcoder.tui.parts.sessions_ui import SessionsUI

__all__ = ["GoalUI"]


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

    @cached_property
    def runner(self) -> GoalRunner:
        return GoalRunner(
            self.keeper, self.say.notice, checking=lambda: self.say.header(status=CHECKING_GOAL)
        )

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
        if why := plan_mode_refusal(agent.approval.mode):
            self.say.error(why)
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
        agent = self.services.agent
        why = plan_mode_refusal(agent.approval.mode) if agent is not None else ""
        if why or (why := goal.resume(tokens)):
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
        """The goal's next turn (the scheduler's Next.GOAL), on the turn's worker."""
        agent = self.services.agent
        if agent is None or not self.keeper.due:
            return
        goal = self.keeper.goal
        if goal is not None and (why := plan_mode_refusal(agent.approval.mode)):
            goal.pause("switched to plan mode, where its turns could change nothing")
            self.keeper.changed()
            self.say.notice(f"Goal paused: {why}.")
            return
        await self.model.window_ready()
        await self.runner.turn(agent, ended=self._turn_ended)

    def _turn_ended(self) -> None:
        self.model.check_allocation()
        self.sessions.refresh()
