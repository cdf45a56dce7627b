"""The activity a front end tells its relay (zcoder.frontend.activity): from what happens
to one of the manifest's words, told on a change only."""

from __future__ import annotations

from zcoder.agent import events as ev
from zcoder.agent.status import Status
from zcoder.frontend.activity import ActivityTracker


class Told:
    """Stands where the relay is and keeps what it was told."""

    def __init__(self) -> None:
        self.activities: list[str] = []

    def set_activity(self, activity: str) -> None:
        self.activities.append(activity)


def _tracker() -> tuple[ActivityTracker, Told]:
    told = Told()
    return ActivityTracker(lambda: told), told  # type: ignore[arg-type,return-value]


def test_a_turn_with_a_command_and_a_question_is_told_step_by_step() -> None:
    tracker, told = _tracker()
    tracker.publish()
    tracker.turn_started()
    tracker.on_event(ev.StatusChanged(Status.THINKING))
    for _ in range(500):  # a streamed reply: not one write per token
        tracker.on_event(ev.AssistantDelta("token "))
    tracker.on_event(ev.ToolStarted("c1", "run_command", {"command": "make"}))
    tracker.asking(True)  # the command asks first
    tracker.asking(False)
    tracker.on_event(ev.ToolOutput("c1", "ok"))
    tracker.on_event(ev.ToolFinished("c1", "run_command", "completed", "ok"))
    tracker.on_event(ev.ToolStarted("c2", "read_file", {"path": "x"}))  # no command
    tracker.on_event(ev.ToolFinished("c2", "read_file", "completed", "x"))
    tracker.on_event(ev.TurnFinished(ev.Outcome.COMPLETE))
    tracker.turn_ended()
    assert told.activities == [
        "idle",
        "thinking",
        "running a command",
        "waiting for approval",
        "running a command",
        "thinking",
        "idle",
    ]


def test_held_messages_show_when_idle_and_a_users_command_runs_too() -> None:
    tracker, told = _tracker()
    tracker.held(2)
    tracker.held(2)
    tracker.turn_started()
    tracker.on_event(ev.UserCommandStarted("u1", "ls"))
    tracker.on_event(ev.UserCommandFinished("u1", "ls", "completed", ""))
    tracker.turn_ended()
    tracker.held(0)
    assert told.activities == [
        "holding 2 messages",
        "thinking",
        "running a command",
        "thinking",
        "holding 2 messages",
        "idle",
    ]


def test_a_stopped_turn_leaves_no_question_or_command_behind() -> None:
    tracker, told = _tracker()
    tracker.turn_started()
    tracker.on_event(ev.ToolStarted("c1", "run_command", {}))
    tracker.asking(True)
    tracker.turn_ended()  # Escape: the dialog was closed, the command never finished
    assert told.activities[-1] == "idle" and tracker.activity == "idle"
    tracker.asking(False)  # the dialog's own close, after the turn's end
    assert tracker.activity == "idle"
