"""Going back to before one of the user's earlier prompts (/rewind, Escape twice).

The user's prompts are the session's ledger; each entered the model history as a user
message of exactly its text (``run_user_turn``, steering). ``rewind_points`` pairs them
up, newest first, walking both backwards, so a prompt whose message a compaction folded
into its summary has no place in the history (``message`` None): the conversation cannot
go back to it, its files still can. ``cut_conversation`` shortens the agent's history
and ledger and the saved session's history, ledger and transcript together
(SessionStore.cut, one transaction); the files are the edit journal's
(EditJournal.plan_rewind, agent/edits.py); the plan goes back to what the turns kept
made it (PlanKeeper.rewound).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from zcoder.agent.attachments import is_sent_prompt
from zcoder.base.plural import counted

if TYPE_CHECKING:
    from zcoder.agent.core import Agent
    from zcoder.model import Message

__all__ = ["RewindPoint", "cut_conversation", "rewind_points"]

SHOWN_CHARS: Final = 50
"""How much of a prompt names it in the list and the preview."""


@dataclass(frozen=True)
class RewindPoint:
    """Just before the user's prompt number ``prompt`` (from 0, in the ledger)."""

    prompt: int
    text: str
    message: int | None
    """Where its user message is in the model history; None: not there any more (a
    compaction summarised it)."""
    prompts_after: int
    """The prompts a rewind here takes back, this one included."""
    messages_after: int
    """The model history's messages a rewind here drops (0 when ``message`` is None)."""
    also: tuple[str, ...] = ()
    """What else going back here does (the plan, a goal, jobs), said in the preview."""

    @property
    def short(self) -> str:
        line = " ".join(self.text.split())
        return line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1] + "…"

    @property
    def name(self) -> str:
        """The turns it takes back, as the user knows them."""
        return f'the turns from "{self.short}" on'

    def describe(self) -> str:
        """What going back here does to the conversation."""
        if self.message is None:
            return (
                "This prompt is older than the last compaction's summary: the conversation "
                "cannot go back to it (its files can)."
            )
        return " ".join(
            (
                f"The conversation drops {counted(self.prompts_after, 'prompt')}"
                f" and {counted(self.messages_after, 'message')}.",
                *self.also,
            )
        )


def rewind_points(messages: list[Message], ledger: list[str]) -> list[RewindPoint]:
    """Every prompt of ``ledger``, newest first, with its place in ``messages``."""
    places: dict[int, int] = {}
    wanted = len(ledger) - 1
    for index in range(len(messages) - 1, -1, -1):
        if wanted < 0:
            break
        message = messages[index]
        if message.get("role") == "user" and is_sent_prompt(message.get("content"), ledger[wanted]):
            places[wanted] = index
            wanted -= 1
    points = []
    for number in range(len(ledger) - 1, -1, -1):
        place = places.get(number)
        points.append(
            RewindPoint(
                prompt=number,
                text=ledger[number],
                message=place,
                prompts_after=len(ledger) - number,
                messages_after=0 if place is None else len(messages) - place,
            )
        )
    return points


def cut_conversation(agent: Agent, point: RewindPoint) -> list[Message]:
    """Take the agent's conversation back to just before ``point`` and save it so: its
    history, its ledger and the session's transcript (the caller shows that again), and
    the plan as the turns before it left it. The turns after it that changed files now
    count as made before it (the files are left as they are here). Returns the messages
    dropped."""
    if point.message is None:
        raise ValueError("this prompt is no longer in the model's history")
    messages, dropped = agent.messages[: point.message], agent.messages[point.message :]
    ledger = agent.user_ledger[: point.prompt]
    agent.recorder.save(lambda store, sid: store.cut(sid, messages, ledger=point.prompt))
    agent.edits.rewound(point.prompt)
    agent.plan.rewound(messages, dropped)
    agent.take_history(messages, ledger)
    return dropped
