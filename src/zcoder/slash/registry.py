"""The one registry of slash commands: what every front end reads its commands from.

A command is declared once, in zcoder.slash.declared, on a method of the class that
declares it, with its forms (usage and help), where it applies and what it needs::

    @slash_command(Form("/diff", "show every file ..."), where=TUI | EDITOR, needs=AGENT)
    def show_diff(self, argument: str, /) -> Reply:
        (a docstring for whoever carries it out: the body is the front end's)

and that class is marked ``@declares_commands``. The declaring class is the owner type:
a front end carries the command out on the object of that type it registers
(zcoder.slash.owners), which overrides the method. Nothing here imports Textual or ACP:
the TUI (/help, Tab, Ctrl+P), an editor (ACP's available commands) and ``--connect`` (its
refusals) all read this registry; an extension adds commands at run time (``Command``
with ``extension=True``).
"""

from __future__ import annotations

import enum
import importlib
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeVar

__all__ = [
    "Command",
    "CommandRegistry",
    "Form",
    "FrontEnd",
    "Needs",
    "Reply",
    "commands",
    "declare_into",
    "declares_commands",
    "declaring_classes",
    "help_text",
    "slash_command",
]

DECLARED_IN: Final = "zcoder.slash.declared"
"""The module that declares zcoder's own commands, in the order /help lists them."""


class FrontEnd(enum.Flag):
    """Where a command applies: a set of front ends (``TUI | EDITOR``)."""

    TUI = enum.auto()  # the terminal app, run here
    EDITOR = enum.auto()  # an editor, over ACP (``zcoder --acp``)
    REMOTE = enum.auto()  # the terminal app driving a zcoder on another host (``--connect``)


EVERYWHERE: Final = FrontEnd.TUI | FrontEnd.EDITOR | FrontEnd.REMOTE


class Needs(enum.Flag):
    """What carrying a command out needs, besides the front end itself."""

    NOTHING = 0
    AGENT = enum.auto()  # the open session's agent: its conversation, edits, tools
    MODEL = enum.auto()  # a request to the model (in an editor: a turn of its own)
    RELAY = enum.auto()  # the agent relay: this instance's peer, its inbox
    STORE = enum.auto()  # the session store


Reply = Awaitable[str | None] | str | None
"""What a command's method returns: nothing (it said what it had to, as the TUI does), or
the answer to show (as an editor's are), maybe awaited."""

SHELL_FORM: Final = (
    "!COMMAND",
    "run a shell command here, unasked; its output is context for your next prompt",
)
"""Not a slash command (the app runs ``!…`` input itself), but listed with them."""

_VALUE_WORD: Final = re.compile(r"^[\[A-Z]")
"""A word of a usage that stands for a value to type (``NAME``, ``[FOCUS]``)."""


@dataclass(frozen=True)
class Form:
    """One way to call a command, as the help shows it: ``/agents run N | discard N``."""

    usage: str
    help: str

    def fixed_words(self) -> str:
        """The usage up to its first value (of its first alternative): ``/agents run``."""
        first = self.usage.split("|", 1)[0].split()
        return " ".join(word for word in _until_value(first))

    def needs_value(self) -> bool:
        """Whether the form cannot run without a typed value (``/rename NAME``); an
        optional one (``/model [NAME]``) may be left out."""
        return any(word[:1].isupper() for word in self.usage.split()[1:])


def _until_value(words: list[str]) -> Iterator[str]:
    for index, word in enumerate(words):
        if index and _VALUE_WORD.match(word):
            return
        yield word


CommandRun = Callable[[Any, str], Reply]
"""A command's method, unbound: called with its owner and the argument (maybe "")."""


@dataclass(frozen=True)
class Command:
    name: str  # "/agents"
    forms: tuple[Form, ...]
    run: CommandRun
    owner: type = object  # the class that declares it: its front end's owner is one
    aliases: tuple[str, ...] = ()  # other names: "/q", "/exit"
    alias_note: str = ""  # said after each alias in the help
    extension: bool = False  # a custom command or a skill, added at run time
    where: FrontEnd = FrontEnd.TUI  # the front ends it applies to
    needs: Needs = Needs.NOTHING
    remote_refusal: str = ""
    """Why it is not available over ``--connect``, where to ask instead (else the general
    reason: it acts on this machine's zcoder)."""
    neutral: bool = False
    """The declared method carries it out itself, the same in every front end: it returns
    the answer each shows (an owner of the declaring type need not override it)."""

    async def call(self, owner: object, argument: str) -> str | None:
        """Run the command on ``owner``, and what it answers (None: it said it itself); a
        subclass's override of the declared method (the remote sessions' /sessions, say)
        is the one that runs."""
        name = getattr(self.run, "__name__", "")
        bound = getattr(owner, name, None)
        result = bound(argument) if callable(bound) else self.run(owner, argument)
        if inspect.isawaitable(result):
            return await result
        return result

    def applies_to(self, front_end: FrontEnd) -> bool:
        return front_end in self.where


@dataclass
class CommandRegistry:
    """Commands by name, in declaration order; aliases resolve to their command."""

    _commands: dict[str, Command] = field(default_factory=dict)
    _aliases: dict[str, str] = field(default_factory=dict)

    def add(self, command: Command) -> None:
        for name in (command.name, *command.aliases):
            if name in self._commands or name in self._aliases:
                raise ValueError(f"the command {name} is declared twice")
        self._commands[command.name] = command
        for alias in command.aliases:
            self._aliases[alias] = command.name

    def replace_extensions(self, added: Iterable[Command]) -> list[Command]:
        """The commands of the workspace's extensions (tui/parts/custom_commands_ui.py), in place
        of those added before; one whose name a built-in has is refused (returned)."""
        for name in [c.name for c in self if c.extension]:
            del self._commands[name]
        refused = []
        for command in added:
            if self.find(command.name) is not None:
                refused.append(command)
            else:
                self.add(command)
        return refused

    def builtin_names(self) -> frozenset[str]:
        """zcoder's own command names and aliases, without the slash."""
        builtins = [c for c in self if not c.extension]
        return frozenset(n[1:] for c in builtins for n in (c.name, *c.aliases))

    def __iter__(self) -> Iterator[Command]:
        return iter(self._commands.values())

    def of(self, front_end: FrontEnd) -> list[Command]:
        """The commands that apply to ``front_end``, in declaration order."""
        return [command for command in self if command.applies_to(front_end)]

    def __len__(self) -> int:
        return len(self._commands)

    def find(self, name: str) -> Command | None:
        """The command called ``name`` (or an alias of it); None for an unknown name."""
        name = name.lower()
        return self._commands.get(self._aliases.get(name, name))

    def aliases(self) -> dict[str, str]:
        """Each alias and the command it names, in declaration order."""
        return {alias: c.name for c in self for alias in c.aliases}

    def completion_entries(self) -> tuple[str, ...]:
        """Every usage and alias of the TUI's commands: completion takes names and fixed
        arguments from them."""
        tui = self.of(FrontEnd.TUI)
        return (
            *(form.usage for c in tui for form in c.forms),
            *(a for c in tui for a in c.aliases),
        )


_declared: list[type] = []  # classes marked @declares_commands, as their modules load
_registry: CommandRegistry | None = None

_Owner = TypeVar("_Owner", bound=type)
_Run = TypeVar("_Run", bound=Callable[..., Any])
_MARK: Final = "_zcoder_command"


def slash_command(
    *forms: Form,
    where: FrontEnd,
    needs: Needs = Needs.NOTHING,
    aliases: tuple[str, ...] = (),
    alias_note: str = "",
    remote_refusal: str = "",
    neutral: bool = False,
) -> Callable[[_Run], _Run]:
    """Declare the method a command: its forms (the first names it), the front ends it
    applies to, what it needs, its other names; ``remote_refusal``: why ``--connect``
    does not carry it out (only for a command that does not apply there); ``neutral``:
    the method's own body carries it out, answering with the text every front end shows."""
    if not forms:
        raise ValueError("a command needs at least one form")
    if remote_refusal and FrontEnd.REMOTE in where:
        raise ValueError(f"{forms[0].usage} applies over --connect: it is refused nowhere")

    def mark(run: _Run) -> _Run:
        name = forms[0].usage.split()[0]
        declared = Command(name, forms, run, object, aliases, alias_note, where=where, needs=needs)
        setattr(run, _MARK, replace(declared, remote_refusal=remote_refusal, neutral=neutral))
        return run

    return mark


def declares_commands(owner: _Owner) -> _Owner:
    """Mark ``owner`` as declaring the ``@slash_command`` methods it defines: it is their
    owner type (zcoder.slash.owners)."""
    if _registry is not None:
        declare_into(_registry, owner)  # declared after the registry was first read
    _declared.append(owner)
    return owner


def declaring_classes() -> frozenset[type]:
    """The classes marked ``@declares_commands``: zcoder's own, and any declared since."""
    commands()  # zcoder's own are declared when the registry is first read
    return frozenset(_declared)


def declare_into(registry: CommandRegistry, owner: type) -> None:
    """Add the ``@slash_command`` methods of ``owner`` to ``registry``, in their order."""
    for run in vars(owner).values():
        declared = getattr(run, _MARK, None)
        if isinstance(declared, Command):
            registry.add(replace(declared, owner=owner))


def commands() -> CommandRegistry:
    """The registry: zcoder's own commands (``DECLARED_IN``, in the order its classes
    are declared, then any declared elsewhere), and the extensions added since."""
    global _registry
    if _registry is None:
        importlib.import_module(DECLARED_IN)
        registry = CommandRegistry()
        for owner in _declared:  # in the order they were declared
            declare_into(registry, owner)
        _registry = registry
    return _registry


def help_text(registry: CommandRegistry, keys: dict[str, str]) -> str:
    """The TUI's /help: every form of its commands, the aliases, then ``keys`` (key →
    what it does)."""
    tui = registry.of(FrontEnd.TUI)
    rows = [(f.usage, f.help) for c in tui if not c.extension for f in c.forms]
    rows.append(SHELL_FORM)
    added = [(f.usage, f.help) for c in tui if c.extension for f in c.forms]
    width = max(len(k) for k in (*(usage for usage, _ in rows + added), *keys)) + 2
    lines = ["Commands:"]
    lines += [f"  {usage.ljust(width)}{what}" for usage, what in rows]
    if added:
        lines.append("Custom commands and skills of this workspace:")
        lines += [f"  {usage.ljust(width)}{what}" for usage, what in added]
    lines.append("Aliases:")
    for command in tui:
        note = f" ({command.alias_note})" if command.alias_note else ""
        lines += [f"  {alias.ljust(width)}{command.name}{note}" for alias in command.aliases]
    lines.append("Keys:")
    lines += [f"  {key.ljust(width)}{what}" for key, what in keys.items()]
    return "\n".join(lines)
