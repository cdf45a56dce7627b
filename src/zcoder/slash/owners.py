"""Who carries a command out in a front end: the object it registers of the declaring type.

A front end registers its owners (``Owners(FrontEnd.TUI, slash, edits, ...)``); each is
filed under the declaring classes (zcoder.slash.declared) its class subclasses, so a
command's owner is found from its declaration: the object filed under ``command.owner``,
when its class overrides the declared method. A command that applies to a front end with
no such owner is a bug a test finds (``unowned``, tests/slash/test_owners.py); at run time
it is a ``NoOwner`` with the command and the front end named.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from zcoder.base.errors import ZcoderError
from zcoder.slash.registry import Command, CommandRegistry, FrontEnd, commands, declaring_classes

__all__ = ["NoOwner", "Owners", "carries_out", "unowned"]

FRONT_END_NAMES: Final = {
    FrontEnd.TUI: "the TUI",
    FrontEnd.EDITOR: "an editor (--acp)",
    FrontEnd.REMOTE: "--connect",
}


class NoOwner(ZcoderError, LookupError):
    """A command applies to a front end that registered nothing to carry it out."""


def carries_out(kind: type, command: Command) -> bool:
    """Whether an object of ``kind`` carries ``command`` out: ``kind`` is of the declaring
    class and overrides the declared method (or the declaration carries it out itself)."""
    if not issubclass(kind, command.owner):
        return False
    name = getattr(command.run, "__name__", "")
    return command.neutral or getattr(kind, name, None) is not command.run


class Owners:
    """A front end's owners, filed by the declaring classes of theirs."""

    def __init__(self, front_end: FrontEnd, *owners: object) -> None:
        self.front_end = front_end
        self._by_type: dict[type, object] = {}
        declaring = declaring_classes()
        for owner in owners:
            for kind in type(owner).__mro__:
                if kind not in declaring:
                    continue
                if kind in self._by_type:
                    raise ValueError(
                        f"two owners of {kind.__name__}'s commands in {self.name}: "
                        f"{type(self._by_type[kind]).__name__} and {type(owner).__name__}"
                    )
                self._by_type[kind] = owner

    @property
    def name(self) -> str:
        return FRONT_END_NAMES.get(self.front_end, str(self.front_end))

    def kinds(self) -> list[type]:
        """The classes of the owners registered."""
        return [type(owner) for owner in self._by_type.values()]

    def owner_of(self, command: Command) -> object:
        """The object that carries ``command`` out here; an extension's command (a custom
        command, a skill) carries itself out: None."""
        if command.extension:
            return None
        owner = self._by_type.get(command.owner)
        if owner is None or not carries_out(type(owner), command):
            raise NoOwner(
                f"{command.name} has no owner in {self.name}: nothing registered there "
                f"carries out {command.owner.__name__}.{getattr(command.run, '__name__', '')}"
            )
        return owner

    def unowned(self, registry: CommandRegistry | None = None) -> list[str]:
        """What ``unowned`` says of these owners."""
        return unowned(self.front_end, self.kinds(), registry)


def unowned(
    front_end: FrontEnd, kinds: Iterable[type], registry: CommandRegistry | None = None
) -> list[str]:
    """The commands that apply to ``front_end`` and no class of ``kinds`` carries out,
    each said with the class that declares it (empty: every one has an owner)."""
    kinds = list(kinds)
    found = commands() if registry is None else registry
    return [
        f"{command.name} ({command.owner.__name__}.{getattr(command.run, '__name__', '')})"
        for command in found.of(front_end)
        if not command.extension and not any(carries_out(kind, command) for kind in kinds)
    ]
