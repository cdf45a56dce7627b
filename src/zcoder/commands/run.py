"""Carrying out an Invocation on an agent, the same for the TUI and ``--prompt``.

``announce`` says (and saves, so a resumed session shows it) which custom command a
prompt came from; ``activate`` puts a skill's instructions into the conversation as a
context record (zcoder.skills.active), once: a skill already active is said to be, not
added again. ``run_typed`` does the whole of a typed prompt for a front end that shows
nothing itself (``--prompt``); the TUI shows the prompt first, then runs its turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zcoder.agent.events import Notice, Outcome, TurnFinished
from zcoder.commands.invoke import Invocation, UserCommands
from zcoder.skills.active import active_skills, user_activation

if TYPE_CHECKING:
    from zcoder.agent import Agent


def announce(agent: Agent, invocation: Invocation) -> None:
    """A custom command's prompt: the transcript says which command it came from."""
    if invocation.command is None:
        return
    text = invocation.announcement()
    agent.recorder.event("system", text, {"custom_command": invocation.command.name})
    agent.recorder.emit(Notice(text))


def activate(agent: Agent, invocation: Invocation) -> None:
    """The invocation's skill joins the conversation (between turns), unless it is active."""
    skill = invocation.skill
    if skill is None:
        return
    where = f"({skill.source}: {skill.folder})"
    if skill.name in active_skills(agent.messages):
        agent.recorder.emit(Notice(f"The skill {skill.name} is already active {where}."))
        return
    agent.note_for_model(
        user_activation(skill, agent.settings.max_tool_output),
        f"Skill {skill.name} is active {where}: its instructions joined the conversation.",
    )


async def run_typed(agent: Agent, user: UserCommands, typed: str) -> TurnFinished:
    """A prompt as typed: a command's or a skill's, or an ordinary one. Only activating a
    skill (``$NAME`` alone) asks the model nothing and completes at once."""
    invocation = user.resolve(typed)
    if invocation is None:
        return await agent.run_user_turn(typed)
    announce(agent, invocation)
    activate(agent, invocation)
    if invocation.prompt:
        return await agent.run_user_turn(invocation.prompt)
    return TurnFinished(Outcome.COMPLETE)
