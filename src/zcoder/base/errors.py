"""The root of zcoder's errors, and the exit codes the program ends with.

An error a user may see derives from ``ZcoderError`` (beside the built-in base code
catches it by, such as ``ValueError``): its message says what went wrong and what to do,
and ``exit_code`` is how the program ends when nothing closer handles it. ``zcoder.cli``
catches it once, at the top, prints ``zcoder: <message>`` and exits with that code.
"""

from __future__ import annotations

from typing import ClassVar, Final

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
"""Something went wrong (the model, the session store, the embedded server...)."""
EXIT_USAGE: Final = 2
"""The command line, a setting or a name the user gave is wrong (argparse's code too)."""
EXIT_INTERRUPTED: Final = 130
"""Ctrl+C (128 + SIGINT, as a shell reports it)."""
EXIT_READER_GONE: Final = 141
"""The reader of standard output went away (``| head``): 128 + SIGPIPE, as a shell
reports a program the broken pipe ended."""


class ZcoderError(Exception):
    """An error with a message for the user and the exit code it ends the program with."""

    exit_code: ClassVar[int] = EXIT_FAILED


class UsageError(ZcoderError):
    """What the user gave (a flag, a setting, a name) is wrong: exit code 2."""

    exit_code: ClassVar[int] = EXIT_USAGE


class ConfigError(UsageError, ValueError):
    """A setting that cannot be used; the message names it and says what is accepted."""
