"""Custom commands (Markdown prompts invoked as ``/NAME``) and what a typed name invokes.

Loading and expansion live here, free of the TUI, so the TUI and ``--prompt`` read and run
them alike: ``discover_commands`` (zcoder.commands.files), ``expand``
(zcoder.commands.expand), ``UserCommands`` joining them with the skills
(zcoder.commands.invoke).
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
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

__getattr__, __dir__, __all__ = face(__name__, __file__)
