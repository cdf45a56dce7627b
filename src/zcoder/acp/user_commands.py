"""The workspace's custom commands and user-invocable skills in an editor's session.

They are ACP available commands next to zcoder's own (zcoder.acp.commands), with their
description and argument hint, and a prompt that names one is carried out by
zcoder.commands.run.run_typed, the path ``--prompt`` takes: ``/NAME ARGS`` of a custom
command (its body, expanded, is the prompt), ``/NAME TEXT`` of a skill, ``/skill NAME TEXT``
and ``$NAME TEXT`` (the skill is activated, then TEXT sent, if any).

zcoder's own names win, as in the TUI and ``--prompt``: a custom command or a skill called
``help``, ``model``... is refused (said in the log). Those names are the one registry's
(zcoder.slash), every front end's alike.
What a command file says is the workspace's, not zcoder's: it is offered only as visible
text, cut to a length an editor's menu shows.
"""

from __future__ import annotations

import logging
from typing import Final

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from zcoder.base.sanitize import visible
from zcoder.commands import CommandSet, UserCommands
from zcoder.commands.invoke import SKILL_COMMAND
from zcoder.skills import SkillSet
from zcoder.slash.registry import commands

log = logging.getLogger(__name__)

MAX_DESCRIPTION: Final = 200
MAX_HINT: Final = 80


def _cut(text: str, limit: int) -> str:
    text = " ".join(visible(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _command(name: str, description: str, hint: str) -> AvailableCommand:
    hint = _cut(hint, MAX_HINT)
    return AvailableCommand(
        name=name,
        description=_cut(description, MAX_DESCRIPTION),
        input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
    )


def user_commands(skills: SkillSet, found: CommandSet) -> UserCommands:
    """What a prompt may name; refused names and files that did not load go to the log."""
    user = UserCommands.build(skills, found, commands().builtin_names())
    for text in [*user.refused, *user.problems()]:
        log.warning("%s", visible(text))
    return user


def offered(user: UserCommands) -> list[AvailableCommand]:
    """The skills' and custom commands' entries, after zcoder's own."""
    entries = [
        _command(name, f"activate the skill, then send TEXT: {skill.description}", "[TEXT]")
        for name, skill in user.skill_commands.items()
    ]
    entries += [
        _command(name, f"{command.description} ({command.label()})", command.argument_hint)
        for name, command in user.custom.items()
    ]
    skill = commands().find(f"/{SKILL_COMMAND}")
    if user.skills.names() and skill is not None:  # /skill as the TUI declares it
        usage, help_text = skill.forms[0].usage, skill.forms[0].help
        entries.append(_command(SKILL_COMMAND, help_text, usage.partition(" ")[2]))
    return entries
