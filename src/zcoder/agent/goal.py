"""A goal: an objective zcoder works toward turn after turn until an independent check
accepts it (``/goal``).

This module is the goal's state and its words, with no front end and no model: what a
goal holds (``Goal``: the objective, its budgets, what it spent, how it stands), how it
is saved with the session (``to_doc``/``from_doc``, the session state's ``"goal"`` key),
the short record each of its turns begins with (``worker_record``), and ``/goal``'s
arguments (``parse_goal_args``). The check is zcoder.agent.goal_check; the front end
that runs the turns keeps the goal in a zcoder.frontend.goal.GoalKeeper.

A goal never runs by itself after it was saved: one loaded from a session is paused
(``from_doc``), whatever it was doing when it was saved.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Final

from zcoder.base.errors import UsageError
from zcoder.base.plural import counted
from zcoder.tools.modes import Mode

__all__ = [
    "DEFAULT_GOAL_TOKENS",
    "GOAL_TURNS",
    "Goal",
    "GoalArgs",
    "GoalState",
    "parse_goal_args",
    "plan_mode_refusal",
    "short_tokens",
    "worked_in",
    "worker_record",
]

PLAN_MODE_REFUSAL: Final = (
    "a goal is worked at by changing files, and plan mode changes nothing: switch the mode "
    "first (Shift+Tab, or /mode ask), then start or resume the goal"
)


def plan_mode_refusal(mode: Mode) -> str:
    """Why a goal may not start or go on in ``mode`` ("" when it may): its turns could
    only plan, and its check would send it back each time until its turns ran out."""
    return PLAN_MODE_REFUSAL if mode is Mode.PLAN else ""


DEFAULT_GOAL_TOKENS: Final = 200_000
"""A goal's token budget when ``--tokens`` does not say (prompt and output tokens as the
server counts them, the worker's turns and the checks together)."""
GOAL_TURNS: Final = 20
"""The turns a goal runs before it pauses to ask the user (``/goal resume`` gives it as
many more)."""
MAX_OBJECTIVE_CHARS: Final = 4000
"""An objective longer than this is refused: it goes into every turn's record."""
FEEDBACK_CHARS: Final = 2000
"""How much of a check's reasons the next turn's record carries."""
RECORD_PREFIX: Final = "[goal]"
"""How a goal turn's record begins (the model history, the transcript)."""


class GoalState(StrEnum):
    RUNNING = "running"  # its turns run when nothing else waits
    PAUSED = "paused"  # /goal pause, Escape, a budget, an error, a restart: /goal resume
    DONE = "done"  # the check accepted it


@dataclasses.dataclass
class Goal:
    objective: str
    budget: int = DEFAULT_GOAL_TOKENS
    spent: int = 0  # tokens the server counted for its turns and checks
    turns: int = 0
    turn_limit: int = GOAL_TURNS  # it pauses when ``turns`` reaches this
    rejections: int = 0
    state: GoalState = GoalState.RUNNING
    note: str = ""  # why it paused, or the accepting check's reasons
    feedback: str = ""  # the last rejecting check's reasons, for the next turn
    since_turn: int = 0  # the edit journal's turn when it started: its diff is after it

    @property
    def running(self) -> bool:
        return self.state is GoalState.RUNNING

    def over_budget(self) -> str:
        """Why it must stop now ("" when it may go on)."""
        if self.spent >= self.budget:
            used = f"{short_tokens(self.spent)}/{short_tokens(self.budget)}"
            return f"its token budget is spent ({used})"
        if self.turns >= self.turn_limit:
            return f"it ran {counted(self.turns, 'turn')}"
        return ""

    def pause(self, why: str) -> None:
        self.state, self.note = GoalState.PAUSED, why

    def resume(self, budget: int | None) -> str:
        """Running again; what stands in the way ("" when it runs). ``budget``: a new
        total budget, which must be more than it spent."""
        if self.state is GoalState.DONE:
            return "this goal is done; /goal OBJECTIVE starts another"
        if budget is not None:
            if budget <= self.spent:
                return f"--tokens must be more than the {self.spent:,} tokens it has spent"
            self.budget = budget
        if self.spent >= self.budget:
            return (
                f"its token budget is spent ({self.spent:,}/{self.budget:,}); "
                "/goal resume --tokens N sets a larger one"
            )
        if self.turns >= self.turn_limit:
            self.turn_limit = self.turns + GOAL_TURNS
        self.state, self.note = GoalState.RUNNING, ""
        return ""

    def status_text(self) -> str:
        """``/goal status``'s answer."""
        lines = [
            f"Goal ({self.state.value}): {self.objective}",
            f"{counted(self.turns, 'turn')} of at most {self.turn_limit}, {self.rejections} sent "
            f"back by the check; {self.spent:,} of {self.budget:,} tokens.",
        ]
        if self.note:
            lines.append(("Accepted: " if self.state is GoalState.DONE else "Why: ") + self.note)
        if self.feedback and self.state is not GoalState.DONE:
            lines.append(f"The check's last reasons: {self.feedback}")
        return "\n".join(lines)

    def badge(self) -> tuple[str, str]:
        """The header's words for it: (long, short), "goal 3 turns · 12k/50k"."""
        used = f"{short_tokens(self.spent)}/{short_tokens(self.budget)}"
        word = {
            GoalState.RUNNING: counted(self.turns, "turn"),
            GoalState.PAUSED: "paused",
            GoalState.DONE: "done",
        }[self.state]
        return (
            f"goal {word} · {used}",
            f"goal {self.turns} · {used}" if self.running else f"goal {word}",
        )

    # -- saved with the session ---------------------------------------------------------

    def to_doc(self) -> dict[str, Any]:
        doc = dataclasses.asdict(self)
        doc["state"] = self.state.value
        return doc

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Goal | None:
        """A saved goal, paused if it was running (never resumes by itself); None when
        the document is not one (an older or damaged save)."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        try:
            values = {key: doc[key] for key in fields if key in doc}
            goal = cls(**values)
            goal.state = GoalState(goal.state)
        except (TypeError, ValueError, KeyError):
            return None
        ints = (goal.budget, goal.spent, goal.turns, goal.turn_limit, goal.rejections)
        strings = (goal.objective, goal.note, goal.feedback)
        if not all(type(n) is int for n in (*ints, goal.since_turn)):
            return None
        if not all(isinstance(s, str) for s in strings) or not goal.objective.strip():
            return None
        if goal.running:
            goal.pause("zcoder was restarted or the session reopened; /goal resume goes on")
        return goal


def short_tokens(tokens: int) -> str:
    """``950``, ``12k``, ``1.2M``: a count the header has room for."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 1_000_000:
        return f"{tokens // 1000}k"
    return f"{tokens / 1_000_000:.1f}M"


def _record_head(goal: Goal) -> str:
    return f"{RECORD_PREFIX} Work toward this objective: {goal.objective}\n"


def worked_in(goal: Goal, messages: Iterable[Mapping[str, Any]]) -> bool:
    """Whether ``messages`` hold one of ``goal``'s turns (the record it begins with)."""
    head = _record_head(goal)
    return any(
        m.get("role") == "user" and str(m.get("content", "")).startswith(head) for m in messages
    )


def worker_record(goal: Goal) -> str:
    """The user-role record a goal turn begins with: the objective, where it stands, and
    that it ends with ``finish``; after a rejection, the check's reasons."""
    lines = [
        _record_head(goal).rstrip("\n"),
        f"Goal turn {goal.turns + 1} of at most {goal.turn_limit}; "
        f"{short_tokens(goal.spent)} of {short_tokens(goal.budget)} tokens spent.",
        "When it is done, call finish (status complete) saying what you did; an independent "
        "check reads the changes and may send it back. If you cannot go on, call finish "
        "with status blocked and why.",
    ]
    if goal.feedback:
        lines.append(f"The check sent it back: {goal.feedback[:FEEDBACK_CHARS]}")
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class GoalArgs:
    """``/goal``'s argument: an ``action`` (start, status, pause, resume, clear), the
    objective to start, and ``--tokens``."""

    action: str
    objective: str = ""
    tokens: int | None = None


CONTROLS: Final = ("status", "pause", "resume", "clear")
USAGE: Final = "/goal OBJECTIVE [--tokens N], or /goal status|pause|resume [--tokens N]|clear"


def parse_goal_args(argument: str) -> GoalArgs:
    """``/goal``'s argument; a UsageError says what is wrong. ``--tokens N`` may stand
    anywhere as its own words; a lone control word is the control (an objective of one
    such word would say nothing the model could work on)."""
    words = argument.split()
    tokens: int | None = None
    kept: list[str] = []
    n = 0
    while n < len(words):
        word = words[n]
        if word == "--tokens" or word.startswith("--tokens="):
            value = word.partition("=")[2] if "=" in word else None
            if value is None:
                n += 1
                value = words[n] if n < len(words) else ""
            tokens = _budget(value)
        else:
            kept.append(word)
        n += 1
    objective = argument.strip() if tokens is None else " ".join(kept)
    if not kept:
        if tokens is not None:
            raise UsageError(f"--tokens needs an objective or resume; usage: {USAGE}")
        return GoalArgs("status")
    if len(kept) == 1 and kept[0] in CONTROLS:
        if tokens is not None and kept[0] != "resume":
            raise UsageError(f"--tokens goes with an objective or resume; usage: {USAGE}")
        return GoalArgs(kept[0], tokens=tokens)
    if len(objective) > MAX_OBJECTIVE_CHARS:
        raise UsageError(
            f"the objective is {len(objective):,} characters; at most {MAX_OBJECTIVE_CHARS:,}"
            " (it goes into every turn): put the details in a file and name it"
        )
    return GoalArgs("start", objective, tokens)


def _budget(value: str) -> int:
    text = value.strip().lower().replace("_", "").replace(",", "")
    scale = 1
    if text.endswith("k"):
        text, scale = text[:-1], 1000
    if not (text.isascii() and text.isdigit()) or int(text) * scale <= 0:
        raise UsageError(f"--tokens takes a positive count of tokens (50000 or 50k), not {value!r}")
    return int(text) * scale
