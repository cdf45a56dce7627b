"""Custom commands and skills in the TUI: ``/NAME``, ``/skill NAME``, ``$NAME``, ``/skills``.

What a name invokes is decided outside the TUI (zcoder.commands.invoke), the same as for
``--prompt``; this module only puts it on the screen. The workspace's custom commands and
user-invocable skills join the one command registry (slash/registry.py) as commands
added at run time, so /help, Tab and the palette list them like zcoder's own; a name
zcoder's own commands have is refused with a notice.

Running one never skips the queue: ``/review 12`` typed while a turn runs waits behind
it like a prompt (the queue shows it as typed), and when its turn comes (``plan``, called
by tui/parts/turns.py) the transcript says which command it came from, then shows the prompt
the model gets. A skill activated by the user joins the conversation as a context record
(zcoder.skills.active), between turns, never inside one.

The part takes its context and what it uses of the screen (callables), not the app: tui/
imports as a tree.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import KW_ONLY, dataclass, field
from functools import partial
from typing import Any, Final

from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.commands import CommandSet, Invocation, UserCommands, discover_commands
from zcoder.commands.run import activate, announce
from zcoder.skills import SkillSet, discover_skills, install_skills
from zcoder.skills.active import active_skills
from zcoder.skills.tools import ACTIVATE_SKILL, catalog_text
from zcoder.slash.declared import SkillCommands
from zcoder.slash.registry import Command, Form, commands
from zcoder.tui.parts.commands import parse_slash
from zcoder.tui.parts.services import Part
from zcoder.tui.widgets.transcript import Entry, error_text, system_text, user_text

__all__ = ["CustomCommandsUI"]

MAX_SHOWN_PROBLEMS: Final = 5
MAX_HELP_CHARS: Final = 90
Work = Callable[[], Coroutine[Any, Any, None]]


def _cut(text: str, limit: int = MAX_HELP_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _usage(name: str, hint: str) -> str:
    """The usage /help shows: the hint as written when it reads as values (``[pr]``,
    ``FILE``); else ``ARGUMENTS``, so completion never offers a hint's word as fixed."""
    if not hint:
        return f"/{name}"
    if "|" not in hint and (hint[0] == "[" or hint[0].isupper()):
        return f"/{name} {hint}"
    return f"/{name} ARGUMENTS"


@dataclass(eq=False)
class CustomCommandsUI(Part, SkillCommands):
    """Takes, besides its context (the agent, whether a turn runs, the workspace and
    ZCODER_HOME), what it uses of the screen: ``show`` (into the transcript now, in order
    with the agent's), ``queue`` (a prompt into the queue, as if typed), ``user_turn``
    (the body of a prompt's turn) and ``refresh`` (the meter, the sessions list: after a
    change)."""

    _: KW_ONLY
    show: Callable[[Entry], object]
    queue: Callable[[str], None]
    user_turn: Callable[[str], Awaitable[None]]
    refresh: tuple[Callable[[], None], ...]
    user: UserCommands = field(default_factory=UserCommands, init=False)

    # -- loading --------------------------------------------------------------------------

    def install(self, skills: SkillSet, found: CommandSet) -> None:
        """Offer ``skills`` and ``found`` as commands (in place of any offered before)."""
        registry = commands()
        self.user = UserCommands.build(skills, found, registry.builtin_names())
        added = [
            self._command(name, skill.description, "[TEXT]", True)
            for name, skill in self.user.skill_commands.items()
        ]
        for name, command in self.user.custom.items():
            what = f"{command.description} ({command.label()})"
            added.append(self._command(name, what, command.argument_hint, False))
        registry.replace_extensions(added)
        show = self.show
        for text in self.user.refused:
            show(Entry("error", error_text(text)))
        # Shadowed ones are by choice: /skills lists them with the rest.
        problems = [p for p in self.user.problems() if ": shadowed by " not in p]
        for text in problems[:MAX_SHOWN_PROBLEMS]:
            show(Entry("system", system_text(f"A custom command was not added: {text}")))
        if len(problems) > MAX_SHOWN_PROBLEMS:
            more = len(problems) - MAX_SHOWN_PROBLEMS
            show(Entry("system", system_text(f"… and {more} more custom command files.")))

    def _command(self, name: str, what: str, hint: str, skill: bool) -> Command:
        help_text = _cut(visible(f"activate the skill, then send TEXT: {what}" if skill else what))
        return Command(
            f"/{name}",
            (Form(_usage(name, hint), help_text),),
            lambda _owner, argument: self._queue(f"/{name} {argument}".strip()),
            extension=True,
        )

    def _queue(self, typed: str) -> None:
        self.queue(typed)

    # -- /skills, /skill ------------------------------------------------------------------

    def skills_command(self, argument: str) -> None:
        if argument.strip() == "reload":
            self._reload()
        elif argument.strip():
            self.show(Entry("error", error_text("/skills takes nothing, or reload")))
        else:
            self.show(Entry("system", system_text(self.listing())))

    def skill_command(self, argument: str) -> None:
        name = argument.split(None, 1)[0] if argument.strip() else ""
        if self.user.skills.get(name) is None:
            known = ", ".join(self.user.skills.names()[:20]) or "none here"
            text = f"no skill named {name[:80]!r}; the skills are: {known}"
            self.show(Entry("error", error_text(text)))
            return
        self._queue(f"/skill {argument.strip()}")

    def listing(self) -> str:
        skills = self.user.skills
        agent = self.services.agent
        active = set(active_skills(agent.messages)) if agent is not None else set()
        if not skills and not skills.problems and not self.user.problems():
            return "No skills here (.agents/skills/, ~/.agents/skills/, .claude/skills/)."
        lines = ["Skills (* active):"] if skills else []
        for name in skills.names():
            skill = skills.skills[name]
            mark = "*" if name in active else " "
            lines.append(f"  {mark} {name}  {skill.source}  {skill.folder}")
            lines.append(f"      {_cut(skill.description, 120)}")
        if skills.problems:
            lines.append("Not loaded:")
            lines += [f"  {problem.path}: {problem.reason}" for problem in skills.problems]
        if problems := self.user.problems():
            lines.append("Custom commands not added:")
            lines += [f"  {text}" for text in problems]
        lines.append("/skill NAME or $NAME activates one; /skills reload reads them again.")
        return "\n".join(lines)

    def _reload(self) -> None:
        services, agent = self.services, self.services.agent
        if agent is None or services.busy():
            text = "/skills reload runs when no turn is running; try again when this one ends."
            self.show(Entry("system", system_text(text)))
            return
        skills, found = self.user.skills, discover_skills(services.config.workspace)
        # In place: the skill tools already registered read this same set.
        skills.skills.clear()
        skills.skills.update(found.skills)
        skills.problems[:] = found.problems
        if skills and agent.registry.get(ACTIVATE_SKILL) is None:
            install_skills(agent.registry, skills)
        agent.settings.skills_catalog = catalog_text(skills)
        self.install(skills, discover_commands(services.config.workspace, services.config.home))
        skill_count = counted(len(skills.skills), "skill")
        text = f"Reloaded: {skill_count}, {counted(len(self.user.custom), 'custom command')}."
        self.show(Entry("system", system_text(text)))

    # -- a queued prompt's turn -------------------------------------------------------------

    def plan(self, prompt: str) -> Work | None:
        """The turn of a queued ``prompt`` that invokes a command or a skill; None for an
        ordinary prompt (tui/parts/turns.py runs it as one)."""
        invocation = self.user.resolve(prompt)
        if invocation is not None:
            return partial(self._run, invocation)  # a coroutine function, as workers need
        if parse_slash(prompt) is not None:  # queued by a command that a reload removed
            text = f"{prompt.split(maxsplit=1)[0]} is no longer a command (after /skills reload)"
            return partial(self._say_error, text)
        return None

    async def _say_error(self, text: str) -> None:
        self.show(Entry("error", error_text(text)))

    async def _run(self, invocation: Invocation) -> None:
        services = self.services
        agent = services.agent
        assert agent is not None
        announce(agent, invocation)
        activate(agent, invocation)
        if invocation.prompt:
            self.show(Entry("user", user_text(invocation.prompt)))
            await self.user_turn(invocation.prompt)
        else:
            for refresh in self.refresh:
                refresh()
