"""``--prompt "/goal OBJECTIVE [--tokens N]"``: a goal run to its end without the UI.

A prompt that is a /goal runs the goal's turns one after another (GoalRunner,
zcoder.frontend.goal_run) until the check accepts it (exit 0) or it pauses: its budget,
its turn limit, a blocked or failed turn, a failed check (exit 1), or Ctrl+C (130, as
a turn's). ``/goal resume [--tokens N]`` with ``--resume ID`` goes on with
that session's goal. The goal is saved with the session at every change, as the TUI
saves it, so either can go on with it. Its notices go to standard error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from zcoder.agent import Outcome, TurnFinished
from zcoder.agent.goal import Goal, GoalArgs, GoalState, parse_goal_args, plan_mode_refusal
from zcoder.base.sanitize import visible
from zcoder.frontend.goal import GoalKeeper
from zcoder.frontend.goal_run import GoalRunner

if TYPE_CHECKING:
    from zcoder.agent import Agent
    from zcoder.sessions import SessionStore

__all__ = ["goal_args", "run_goal"]

COMMAND = "/goal"


def goal_args(prompt: str) -> GoalArgs | None:
    """The /goal a prompt is (None: it is not one); a UsageError says what is wrong."""
    text = prompt.strip()
    if text != COMMAND and not text.startswith(f"{COMMAND} "):
        return None
    return parse_goal_args(text.removeprefix(COMMAND))


async def run_goal(
    agent: Agent,
    args: GoalArgs,
    *,
    store: SessionStore,
    session_id: str,
    state: dict[str, dict[str, Any]],
    err: TextIO,
) -> TurnFinished:
    """Start or resume the session's goal and run it to its end; how it ended, as a turn
    would have (COMPLETE: accepted; INCOMPLETE: paused, with why)."""
    keeper = GoalKeeper()
    keeper.on_save_error = lambda text: err.write(f"zcoder: {text}\n")
    keeper.switch(store.save_state, session_id, state)
    goal, refused = keeper.goal, ""
    if args.action in ("start", "resume"):
        refused = plan_mode_refusal(agent.approval.mode)
    if refused:
        pass
    elif args.action == "start":
        if goal is not None and goal.state is not GoalState.DONE:
            refused = "this session has a goal already: /goal resume goes on with it"
        else:
            goal = Goal(args.objective, since_turn=agent.edits.turn)
            if args.tokens is not None:
                goal.budget = args.tokens
            keeper.set(goal)
    elif args.action == "resume":
        if goal is None:
            refused = "this session has no goal to resume"
        else:
            refused = goal.resume(args.tokens)
            keeper.changed()
    else:
        refused = f"/goal {args.action} works in the interactive UI; --prompt takes /goal "
        refused += "OBJECTIVE or /goal resume"
    if refused:
        err.write(f"zcoder: {visible(refused)}\n")
        return TurnFinished(Outcome.INCOMPLETE, error=refused)
    runner = GoalRunner(keeper, lambda text: err.write(f"[zcoder] {text}\n"))
    while keeper.due:
        await runner.turn(agent)
    assert goal is not None
    if goal.state is GoalState.DONE:
        return TurnFinished(Outcome.COMPLETE, goal.note)
    err.write(f"zcoder: the goal paused: {visible(goal.note)}\n")
    return TurnFinished(Outcome.INCOMPLETE, error=f"the goal paused: {goal.note}")
