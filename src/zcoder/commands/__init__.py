"""Custom commands (Markdown prompts invoked as ``/NAME``) and what a typed name invokes.

Loading and expansion live here, free of the TUI, so the TUI and ``--prompt`` read and run
them alike: ``discover_commands`` (zcoder.commands.files), ``expand``
(zcoder.commands.expand), ``UserCommands`` joining them with the skills
(zcoder.commands.invoke).
"""

from zcoder.commands.expand import expand
from zcoder.commands.files import (
    CommandFileError,
    CommandProblem,
    CommandSet,
    CustomCommand,
    command_places,
    discover_commands,
    parse_command,
)
from zcoder.commands.invoke import Invocation, UserCommands

__all__ = [
    "CommandFileError",
    "CommandProblem",
    "CommandSet",
    "CustomCommand",
    "Invocation",
    "UserCommands",
    "command_places",
    "discover_commands",
    "expand",
    "parse_command",
]
