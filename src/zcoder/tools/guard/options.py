"""Reading a command's options the way most programs do: which words are operands, and
whether an option is given alone, with ``=value`` or in a bundle of letters (``-rf``).

Shared by every table-driven rule, so each table only has to say which options take a
value.
"""

from __future__ import annotations

from zcoder.tools.guard.model import _Word


def _operands_after_options(args: list[_Word], takes: set[str]) -> list[_Word]:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        index += 2 if args[index].text in takes else 1
    return args[index:]


def _operands(args: list[str], takes: frozenset[str] = frozenset()) -> list[str]:
    """The operands among ``args``: not options, nor the values of options in ``takes``."""
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands.extend(args[index:])
            break
        if arg.startswith("-") and arg != "-":
            if arg in takes:
                index += 1
            continue
        operands.append(arg)
    return operands


def _has_option(args: list[str], *options: str) -> bool:
    """Whether any of ``options`` is given: long ones as written or with ``=value``, short
    ones alone or in a bundle of letters (``-rf``)."""
    for arg in args:
        if arg == "--":
            return False
        for option in options:
            if option.startswith("--"):
                if arg == option or arg.startswith(option + "="):
                    return True
            elif len(option) > 2:
                if arg == option or arg.startswith(option + "="):
                    return True  # -sdel
            elif arg.startswith("-") and not arg.startswith("--") and option[1] in arg[1:]:
                return True
    return False


# Deleters --------------------------------------------------------------------------------
