"""What the user may invoke by name: custom commands and skills, and what typing one means.

``UserCommands`` joins the workspace's custom commands (zcoder.commands.files) and its
skills: a skill is also the command ``/NAME`` unless its front matter says
``user-invocable: false``. Names are shared with zcoder's own commands, and those win: a
custom command or skill named ``help`` is refused with a notice saying so, never run in
place of ``/help``. A skill wins over a custom command of the same name (as in Claude
Code); the command is listed as shadowed.

``resolve`` says what a typed prompt asks for, the same for every front end (the TUI's
turns, ``--prompt``): ``/NAME ARGS`` of a custom command (its body, expanded, is the
prompt), ``/NAME TEXT`` of a skill, ``/skill NAME TEXT`` and ``$NAME TEXT`` (activate the
skill, then send TEXT, if any). Anything else is an ordinary prompt (``$HOME is unset``
stays one: ``$NAME`` counts only when NAME is a skill).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from zcoder.commands.expand import expand
from zcoder.commands.files import CommandProblem, CommandSet, CustomCommand
from zcoder.skills import Skill, SkillSet

SKILL_COMMAND: Final = "skill"  # /skill NAME
_DOLLAR: Final = re.compile(r"\$([a-z0-9]+(?:-[a-z0-9]+)*)(?=\s|$)(.*)", re.DOTALL)
_SLASH: Final = re.compile(r"/(\S+)(.*)", re.DOTALL)


@dataclass(frozen=True)
class Invocation:
    """A typed prompt that names a command or a skill: what to activate, what to send."""

    typed: str  # as typed (stripped)
    prompt: str  # the user's prompt for the model ("" : none, only the activation)
    skill: Skill | None = None  # activated first
    command: CustomCommand | None = None  # whose body ``prompt`` is

    def announcement(self) -> str:
        """What the transcript says before the prompt goes: which command it came from."""
        first = self.typed.splitlines()[0] if self.typed else ""
        if self.command is not None:
            return (
                f"{first[:200]} → the prompt of the custom command /{self.command.name} "
                f"({self.command.label()}: {self.command.path})"
            )
        return ""


@dataclass
class UserCommands:
    """Custom commands and skills by name, with the names refused and why."""

    skills: SkillSet = field(default_factory=SkillSet)
    commands: CommandSet = field(default_factory=CommandSet)
    reserved: frozenset[str] = frozenset()  # zcoder's own command names, without the slash
    refused: list[str] = field(default_factory=list)  # notices for the user
    skill_commands: dict[str, Skill] = field(default_factory=dict)
    custom: dict[str, CustomCommand] = field(default_factory=dict)

    @classmethod
    def build(
        cls, skills: SkillSet, commands: CommandSet, reserved: frozenset[str]
    ) -> UserCommands:
        found = cls(skills, commands, reserved)
        for name in skills.names():
            skill = skills.skills[name]
            if not skill.user_invocable:
                continue
            if name in reserved:
                found.refused.append(
                    f"The skill {name} is not the command /{name}: /{name} is zcoder's own "
                    f"(activate it with ${name} or /skill {name})."
                )
                continue
            found.skill_commands[name] = skill
        for name in commands.names():
            command = commands.commands[name]
            if name in reserved:
                found.refused.append(
                    f"The custom command /{name} in {command.path} was not added: /{name} is "
                    "zcoder's own command, which wins. Rename the file to use it."
                )
            elif name in found.skill_commands:
                reason = f"shadowed by the skill {name} (a skill wins over a command)"
                commands.problems.append(CommandProblem(command.path, reason))
            else:
                found.custom[name] = command
        return found

    def problems(self) -> list[str]:
        """Every custom command file that did not load, or was shadowed, with why."""
        return [f"{problem.path}: {problem.reason}" for problem in self.commands.problems]

    def resolve(self, text: str) -> Invocation | None:
        """What ``text`` invokes; None for an ordinary prompt (or an unknown name)."""
        typed = text.strip()
        dollar = _DOLLAR.fullmatch(typed)
        if dollar is not None:
            skill = self.skills.get(dollar.group(1))
            if skill is None or not skill.user_invocable:
                return None
            return Invocation(typed, dollar.group(2).strip(), skill=skill)
        slash = _SLASH.fullmatch(typed)
        if slash is None:
            return None
        name, rest = slash.group(1).lower(), slash.group(2).strip()
        if name == SKILL_COMMAND:
            words = rest.split(None, 1)
            skill = self.skills.get(words[0]) if words else None
            if skill is None:
                return None
            return Invocation(typed, words[1].strip() if len(words) > 1 else "", skill=skill)
        if (skill := self.skill_commands.get(name)) is not None:
            return Invocation(typed, rest, skill=skill)
        if (command := self.custom.get(name)) is not None:
            return Invocation(typed, expand(command.body, rest), command=command)
        return None
