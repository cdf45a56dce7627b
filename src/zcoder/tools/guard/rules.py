"""The verdict chain: the rules each simple command is checked against, in order.

A command reaches the rules with its words expanded and its wrappers stripped. Each rule is
one function of :class:`_Command` that raises :class:`_Refused` for a catastrophe or warns;
:data:`_RULES` lists them in the order they are tried, so the first refusal is the reason
given. The tables they read live with them: :mod:`.machine`, :mod:`.writes`,
:mod:`.deleters`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from zcoder.tools.guard.deleters import _check_deletes, _check_mode_change, _check_mv
from zcoder.tools.guard.git import _check_git
from zcoder.tools.guard.machine import (
    _check_accounts,
    _check_disk_tool,
    _check_kill,
    _check_power,
    _check_volumes,
)
from zcoder.tools.guard.model import _Command
from zcoder.tools.guard.wrappers import _strip_wrappers
from zcoder.tools.guard.writes import _check_dd, _check_socat, _check_writes

_Rule = Callable[[_Command], None]

# The rules in the order they are tried: the first refusal is the reason given; warnings
# from every rule tried before it are kept. To add a rule, write a function of one
# _Command beside the table it reads and list it here.
_RULES: tuple[_Rule, ...] = (
    _check_power,  # shutdown, reboot, init 0, systemctl poweroff…
    _check_kill,  # kill -1, killall5, pkill -u root, a pattern that matches everything
    _check_disk_tool,  # partitioning and disk tools that write, mkfs of a device
    _check_volumes,  # zfs destroy of a dataset, btrfs subvolume delete of a tree
    _check_accounts,  # userdel root, passwd -d root
    _check_dd,  # dd of= a device
    _check_socat,  # socat with a device as an address it writes
    _check_writes,  # overwriting /etc/passwd, a device; writing a start-up file
    _check_mv,  # mv onto a device, or of a home, a system tree, a critical file
    _check_deletes,  # every deleter of _DELETERS on a catastrophic target
    _check_git,  # git clean of a catastrophic tree
    _check_mode_change,  # chmod, chown, chgrp -R of /, a system tree, a home
)


def _ignore(_: str) -> None:
    return None


def _check_simple(
    words: list[str],
    workspace: str | None,
    warn: Callable[[str], None] | None = None,
    cwd: str | None = None,
) -> None:
    """The catastrophes, on one command's words (wrappers stripped); ``cwd`` is where a
    ``cd`` earlier in the line went, None for the workspace."""
    words, _ = _strip_wrappers(words)
    if not words:
        return
    command = _Command(posixpath.basename(words[0]), words[1:], workspace, warn or _ignore, cwd)
    for rule in _RULES:
        rule(command)
