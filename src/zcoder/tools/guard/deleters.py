"""Programs that delete files, as a table (:data:`_DELETERS`), and the rules on what they
delete.

rm is not the only way to lose a tree: rmdir, unlink, shred, truncate, ``tar
--remove-files``, ``zip -m``, ``7z -sdel``, ``rsync --remove-source-files``/``--delete``, a
``mv`` away, ``git clean`` and a recursive chmod/chown do it too. Each entry says which
options make a program delete, which operands it deletes and whether recursively; one
check (:func:`_check_tree`) then decides on every target alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from zcoder.tools.guard.model import _Command, _Refused
from zcoder.tools.guard.options import _has_option, _operands
from zcoder.tools.guard.paths import (
    _HARMLESS_DEVICES,
    _PWD_VARS,
    _SYSTEM_SUBTREES,
    _SYSTEM_TREES,
    _VARIABLE_REF,
    _WORKSPACE_ITSELF,
    _critical_file,
    _dangerous_target,
    _expand_home,
    _in_directory,
    _is_device,
    _normalize,
)


@dataclass(frozen=True)
class _Deleter:
    """How a program deletes files. ``when``: the options that make it delete (empty: it
    always does). ``recursive``: what it deletes goes with everything below it (None: when
    given -r, -R or --recursive). ``operands``: which operands it deletes: "all", "sources"
    (all but the last), "last", "inputs" (all but the first, the archive) or "tar". ``takes``: its
    options whose value is the next word."""

    when: tuple[str, ...] = ()
    recursive: bool | None = True
    operands: str = "all"
    takes: frozenset[str] = frozenset()


_RSYNC_TAKES = frozenset(
    {
        "-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--exclude-from",
        "--include-from", "--files-from", "-T", "--temp-dir", "--partial-dir",
        "--compare-dest", "--copy-dest", "--link-dest", "-B", "--block-size", "--port",
        "--password-file", "--log-file", "--chmod", "--chown", "--timeout", "--bwlimit",
        "--max-size", "--min-size", "-M", "--remote-option", "--suffix", "--backup-dir",
    }
)  # fmt: skip
# fmt: off
_DELETERS: dict[str, tuple[_Deleter, ...]] = {
    "rm": (_Deleter(recursive=None),),
    "srm": (_Deleter(recursive=None),),
    "wipe": (_Deleter(recursive=None),),
    "rmdir": (_Deleter(),),
    "unlink": (_Deleter(recursive=False),),
    "shred": (_Deleter(recursive=False, takes=frozenset({"-n", "-s", "--iterations", "--size"})),),
    "truncate": (
        _Deleter(recursive=False, takes=frozenset({"-s", "--size", "-r", "--reference"})),
    ),
    "tar": (_Deleter(when=("--remove-files",), operands="tar"),),
    "zip": (
        _Deleter(
            when=("-m", "--move"),
            operands="inputs",
            takes=frozenset({"-b", "-n", "-t", "-tt", "-P", "-Z", "-O", "--out", "-x", "-i"}),
        ),
    ),
    "rsync": (
        _Deleter(
            when=("--remove-source-files", "--remove-sent-files"),
            operands="sources",
            takes=_RSYNC_TAKES,
        ),
        _Deleter(
            when=(
                "--delete", "--del", "--delete-before", "--delete-during", "--delete-delay",
                "--delete-after", "--delete-excluded",
            ),
            operands="last",
            takes=_RSYNC_TAKES,
        ),
    ),
    "7z": (_Deleter(when=("-sdel",), operands="inputs"),),
}
# fmt: on
_DELETERS["7za"] = _DELETERS["7zz"] = _DELETERS["7z"]
_MV_TAKES = frozenset({"-t", "--target-directory", "-S", "--suffix"})


def _deleted(name: str, args: list[str]) -> list[tuple[str, list[str], bool]]:
    """What ``name args`` deletes: how to name it, its targets, and whether recursively."""
    found: list[tuple[str, list[str], bool]] = []
    for deleter in _DELETERS.get(name, ()):
        given = [o for o in deleter.when if _has_option(args, o)]
        if deleter.when and not given:
            continue
        if deleter.operands == "tar":
            operands = _tar_operands(args)
        else:
            operands = _operands(args, deleter.takes)
            if name.startswith("7z") and operands[:1] in (["a"], ["u"]):
                operands = operands[1:]
            if deleter.operands == "sources":
                operands = operands[:-1]
            elif deleter.operands == "last":
                operands = operands[-1:] if len(operands) >= 2 else []
            elif deleter.operands == "inputs":
                operands = operands[1:]
        recursive = deleter.recursive
        if recursive is None:
            recursive = _has_option(args, "-r", "-R", "--recursive")
        found.append((f"{name} {given[0]}" if given else f"recursive {name}", operands, recursive))
    return found


_TAR_SHORT_TAKES = "fCTXbHKLNVgFI"
_TAR_LONG_TAKES = frozenset(
    {
        "--file", "--directory", "--files-from", "--exclude", "--exclude-from", "--transform",
        "--use-compress-program", "--to-command", "--label", "--newer", "--after-date",
        "--owner", "--group", "--mode", "--format", "--blocking-factor", "--tape-length",
        "--info-script", "--new-volume-script", "--listed-incremental", "--index-file",
    }
)  # fmt: skip


def _tar_operands(args: list[str]) -> list[str]:
    """The files tar archives (relative ones joined to the -C directory before them)."""
    operands: list[str] = []
    directory: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands.extend(_in_directory(a, directory) for a in args[index:])
            break
        if arg.startswith("--"):
            key, _, value = arg.partition("=")
            if not value and key in _TAR_LONG_TAKES and index < len(args):
                value = args[index]
                index += 1
            if key == "--directory":
                directory = value
            continue
        bundle = arg.startswith("-") and len(arg) > 1
        if bundle or (index == 1 and re.fullmatch(r"[A-Za-z]+", arg) and "f" in arg):
            letters = arg.lstrip("-")
            for position, letter in enumerate(letters):
                if letter not in _TAR_SHORT_TAKES:
                    continue
                if bundle and position + 1 < len(letters):
                    value = letters[position + 1 :]
                    if letter == "C":
                        directory = value
                    break
                value = args[index] if index < len(args) else ""
                index += 1
                if letter == "C":
                    directory = value
            continue
        operands.append(_in_directory(arg, directory))
    return operands


def _check_tree(
    what: str,
    operand: str,
    workspace: str | None,
    warn: Callable[[str], None],
    workspace_ok: bool = False,
) -> None:
    """Refuse ``what`` (a recursive delete or mode change) on a catastrophic target."""
    expanded = _expand_home(operand)
    if _VARIABLE_REF.search(expanded) and not _PWD_VARS.match(operand):
        # Depends on a variable the line does not set: dangerous if it were empty?
        bare = _VARIABLE_REF.sub("", expanded)
        reason = _dangerous_target(bare, workspace) if bare else None
        if reason is not None and not (workspace_ok and reason in _WORKSPACE_ITSELF):
            raise _Refused(
                f"{what} on {operand!r} would affect {reason} if its variables were empty; "
                "write the path out literally"
            )
        warn(f"{what} on {operand!r}: the path depends on a variable the guard cannot see")
        return
    reason = _dangerous_target(operand, workspace)
    if reason is not None and not (workspace_ok and reason in _WORKSPACE_ITSELF):
        raise _Refused(f"{what} on {operand!r} would affect {reason}")


def _check_mode_change(command: _Command) -> None:
    """chmod, chown and chgrp -R: refused on /, system trees, homes and what holds the
    workspace; the workspace itself is the user's to change."""
    name, args, workspace, warn = command.name, command.args, command.workspace, command.warn
    if name not in ("chmod", "chown", "chgrp"):
        return
    if "--no-preserve-root" in args:
        raise _Refused(f"{name} --no-preserve-root is never allowed")
    if not (_has_option(args, "-R", "--recursive")):
        if name == "chmod":
            _check_mode_of_system(args)
        return
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    if "--" in args:
        operands = [a for a in args[: args.index("--")] if not a.startswith("-")]
        operands += args[args.index("--") + 1 :]
    if len(operands) >= 2 and not any(a.startswith("--reference") for a in args):
        operands = operands[1:]  # the mode, or the owner and group
    for operand in operands:
        _check_tree(f"recursive {name}", operand, workspace, warn, workspace_ok=True)


_CHMOD_MODE = re.compile(r"[-+=]?[0-7]{1,4}|(?:[ugoa]*[-+=][rwxXst]*|[ugoa]*[-+=][ugo])(?:,.*)?")
_TAKES_ACCESS = re.compile(r"(?:^|,)(?:[ugo]*[ao][ugo]*|)[-=]")


def _check_mode_of_system(args: list[str]) -> None:
    """chmod (not recursive) of / or a system tree with a mode that takes reading or
    entering away from everyone else: ``chmod 000 /`` leaves no user a working machine."""
    words = [a for a in args if not a.startswith("--")]
    modes = [w for w in words if _CHMOD_MODE.fullmatch(w)]
    if not modes:
        return
    mode = modes[0]
    numeric = mode.lstrip("-+=")
    if numeric.isdigit():
        takes = (int(numeric[-1]) & 5) != 5 and not mode.startswith("+")
    else:
        takes = bool(_TAKES_ACCESS.search(mode))
    if not takes:
        return
    for target in words[words.index(mode) + 1 :]:
        tree = _normalize(target)
        system = tree in _SYSTEM_TREES or tree in _SYSTEM_SUBTREES
        if tree == "/" or (system and tree != "/root"):  # root's home is root's to close
            raise _Refused(f"chmod {mode} {tree} takes {tree} away from every user and service")


def _check_mv(command: _Command) -> None:
    """mv onto a device, or of a catastrophic target or a critical file away."""
    if command.name != "mv":
        return
    args, workspace = command.args, command.workspace
    operands = _operands(args, _MV_TAKES)
    destination = _normalize(operands[-1]) if len(operands) >= 2 else ""
    if _is_device(destination) or destination in _HARMLESS_DEVICES:
        raise _Refused(f"mv onto {operands[-1]} deletes what is moved and replaces the device node")
    for source in operands[:-1]:
        reason = _dangerous_target(source, workspace)
        if reason is not None:
            raise _Refused(f"moving {source!r} away would affect {reason}")
        if _critical_file(_normalize(source)):
            raise _Refused(
                f"mv of {_normalize(source)} would lock users out or stop the machine booting"
            )


def _check_deletes(command: _Command) -> None:
    """Every deleter of :data:`_DELETERS`: critical files, and catastrophic trees."""
    name, args, workspace, warn = command.name, command.args, command.workspace, command.warn
    for what, targets, recursive in _deleted(name, args):
        for target in targets:
            normal = _normalize(_expand_home(target))
            if _critical_file(normal):
                raise _Refused(
                    f"{name} of {normal} would lock users out or stop the machine booting"
                )
            if recursive:
                _check_tree(what, target, workspace, warn)
