"""The one registry of slash commands: what /help, Tab completion and the command palette read.

A command is declared once, on the method that carries it out, with its usage and help::

    @slash_command(Form("/model [NAME]", "switch model; ..."))
    async def model_command(self, argument: str) -> None: ...

and the class that owns such methods is marked ``@declares_commands``. Declaring a command
there is all it takes for it to be listed by /help, completed by Tab and offered by Ctrl+P
(tui/command_palette.py); an extension adds commands the same way.

The classes that carry commands out (tui/slash.py, tui/model_ui.py, ...) import the model
client, the relay and the session store, which start-up imports only after the first frame
(tui/startup.py). So this module imports none of them: ``commands()`` imports the modules
named in ``DECLARING_MODULES`` when the registry is first read (a Tab, Ctrl+P, /help, a
command run), and their order is the order of the help.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

__all__ = [
    "DECLARING_MODULES",
    "Command",
    "CommandRegistry",
    "Form",
    "commands",
    "declare_into",
    "declares_commands",
    "help_text",
    "slash_command",
]

DECLARING_MODULES: Final = (
    "zcoder.tui.slash",
    "zcoder.tui.sessions_ui",
    "zcoder.tui.model_ui",
    "zcoder.tui.edits_ui",
    "zcoder.tui.relay_ui",
    "zcoder.tui.inbox_ui",
    "zcoder.tui.mcp_ui",
    "zcoder.tui.quit_ui",
    "zcoder.tui.custom_commands_ui",
)
"""Where commands are declared, in the order /help lists them."""

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


CommandRun = Callable[[Any, str], Awaitable[None] | None]
"""A command's method, unbound: called with its owner and the argument (maybe "")."""


@dataclass(frozen=True)
class Command:
    name: str  # "/agents"
    forms: tuple[Form, ...]
    run: CommandRun
    owner: type = object  # the class whose instance carries it out
    aliases: tuple[str, ...] = ()  # other names: "/q", "/exit"
    alias_note: str = ""  # said after each alias in the help
    extension: bool = False  # a custom command or a skill, added at run time

    async def call(self, owner: object, argument: str) -> None:
        """Run the command on ``owner``; a subclass's override of the declared method (the
        remote sessions' /sessions, say) is the one that runs."""
        name = getattr(self.run, "__name__", "")
        bound = getattr(owner, name, None)
        result = bound(argument) if callable(bound) else self.run(owner, argument)
        if inspect.isawaitable(result):
            await result


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
        """The commands of the workspace's extensions (tui/custom_commands_ui.py), in place
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
        """Every usage and alias: completion takes names and fixed arguments from them."""
        return (*(form.usage for c in self for form in c.forms), *self.aliases())


_declared: list[type] = []  # classes marked @declares_commands, as their modules load
_registry: CommandRegistry | None = None

_Owner = TypeVar("_Owner", bound=type)
_Run = TypeVar("_Run", bound=Callable[..., Any])
_MARK: Final = "_zcoder_command"


@dataclass(frozen=True)
class _Declaration:
    forms: tuple[Form, ...]
    aliases: tuple[str, ...]
    alias_note: str


def slash_command(
    *forms: Form, aliases: tuple[str, ...] = (), alias_note: str = ""
) -> Callable[[_Run], _Run]:
    """Declare the method a command: its forms (the first names it), its other names."""
    if not forms:
        raise ValueError("a command needs at least one form")

    def mark(run: _Run) -> _Run:
        setattr(run, _MARK, _Declaration(forms, aliases, alias_note))
        return run

    return mark


def declares_commands(owner: _Owner) -> _Owner:
    """Mark ``owner`` as carrying out the ``@slash_command`` methods it defines."""
    if _registry is not None:
        declare_into(_registry, owner)  # declared after the registry was first read
    else:
        _declared.append(owner)
    return owner


def declare_into(registry: CommandRegistry, owner: type) -> None:
    """Add the ``@slash_command`` methods of ``owner`` to ``registry``, in their order."""
    for run in vars(owner).values():
        declaration = getattr(run, _MARK, None)
        if not isinstance(declaration, _Declaration):
            continue
        name = declaration.forms[0].usage.split()[0]
        registry.add(
            Command(
                name,
                declaration.forms,
                run,
                owner,
                declaration.aliases,
                declaration.alias_note,
            )
        )


def commands() -> CommandRegistry:
    """The registry, once every module that declares commands is imported: their commands
    come in the order of ``DECLARING_MODULES`` (whichever imported which first)."""
    global _registry
    if _registry is None:
        for module in DECLARING_MODULES:
            importlib.import_module(module)
        order = {module: index for index, module in enumerate(DECLARING_MODULES)}
        registry = CommandRegistry()
        for owner in sorted(_declared, key=lambda o: order.get(o.__module__, len(order))):
            declare_into(registry, owner)
        _registry = registry
    return _registry


def help_text(registry: CommandRegistry, keys: dict[str, str]) -> str:
    """/help: every command's forms, the aliases, then ``keys`` (key → what it does)."""
    rows = [(f.usage, f.help) for c in registry if not c.extension for f in c.forms]
    rows.append(SHELL_FORM)
    added = [(f.usage, f.help) for c in registry if c.extension for f in c.forms]
    width = max(len(k) for k in (*(usage for usage, _ in rows + added), *keys)) + 2
    lines = ["Commands:"]
    lines += [f"  {usage.ljust(width)}{what}" for usage, what in rows]
    if added:
        lines.append("Custom commands and skills of this workspace:")
        lines += [f"  {usage.ljust(width)}{what}" for usage, what in added]
    lines.append("Aliases:")
    for command in registry:
        note = f" ({command.alias_note})" if command.alias_note else ""
        lines += [f"  {alias.ljust(width)}{command.name}{note}" for alias in command.aliases]
    lines.append("Keys:")
    lines += [f"  {key.ljust(width)}{what}" for key, what in keys.items()]
    return "\n".join(lines)
