"""The sysadmin guard: refuse catastrophic shell commands before anyone is asked.

:func:`classify_command` splits a command line into simple commands (at ``;``, ``&&``,
``||``, ``|``, ``&``, newlines, parentheses and command substitutions), strips wrappers
(``sudo``, ``env X=1``, ``nohup``, ``timeout``, …), looks inside ``sh -c``/``bash -c``/
``eval``/``su -c`` strings, and checks each command against a short list of ways to destroy
a machine or a workspace.  It is a safety net for an assistant that asks before every
command, not a sandbox: it fails closed (text it cannot parse is refused) and prefers a
false refusal to a missed catastrophe.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Iterable

__all__ = ["classify_command"]

_MAX_DEPTH = 8
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "{", "}", "!"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})

_SYSTEM_TREES = frozenset(
    {
        "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
        "/opt", "/proc", "/root", "/sbin", "/srv", "/sys", "/usr", "/var",
    }
)  # fmt: skip
_HARMLESS_DEVICES = frozenset(
    {
        "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty",
        "/dev/random", "/dev/urandom", "/dev/full",
    }
)  # fmt: skip
_POWER_COMMANDS = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_FORMAT_COMMANDS = frozenset({"mke2fs", "mkswap", "wipefs", "mkdosfs"})
_DEVICE_WRITERS = frozenset({"tee", "cp", "mv", "shred", "install"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
_FORK_BOMB = re.compile(r"([\w:.\-]+)\(\)\{[^}]*\1\|\1&?[^}]*\};?\1")
_HOME_VARS = re.compile(r"^(\$HOME|\$\{HOME\})(/.*)?$")
_PWD_VARS = re.compile(r"^(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(/\*?)?$")
_GLOB_CHARS = re.compile(r"[*?\[]")

# Wrappers: command name -> options that take a separate argument.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "time": frozenset({"-f", "-o"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "setsid": frozenset(),
    "unbuffer": frozenset(),
    "xargs": frozenset({"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a"}),
}
# Wrappers whose first operand is not the command (timeout DURATION, chrt PRIO, …).
_WRAPPER_OPERANDS = {"timeout": 1, "chrt": 1, "taskset": 1}


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def classify_command(command: str, workspace: str | os.PathLike[str] | None = None) -> str | None:
    """Return why ``command`` is catastrophic, or None when the guard sees no such danger.

    ``workspace`` (the canonical workspace path) lets the guard also refuse recursive
    deletion of the workspace by its absolute path or of one of its ancestors.  Never
    raises: unparseable input yields a refusal reason.
    """
    ws = posixpath.normpath(os.fspath(workspace)) if workspace is not None else None
    try:
        _check_line(command, ws, depth=0)
    except _Refused as refused:
        return refused.reason
    except RecursionError:
        return "the command is nested too deeply to be checked safely"
    return None


def _check_line(text: str, workspace: str | None, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise _Refused("the command nests shells or eval too deeply to be checked safely")
    if "\x00" in text:
        raise _Refused("the command contains a NUL byte")
    squeezed = re.sub(r"\s+", "", text)
    if _FORK_BOMB.search(squeezed):
        raise _Refused("this is a fork bomb")
    # Backticks and newlines separate commands as far as the guard is concerned.
    prepared = text.replace("`", " ; ").replace("\n", " ; ").replace("\r", " ; ")
    lexer = shlex.shlex(prepared, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise _Refused(f"the command could not be parsed safely ({exc}); fix its quoting") from exc
    for words, redirects in _simple_commands(tokens):
        for target in redirects:
            _check_redirect(target)
        for word in words:
            for inner in _substitutions(word):
                _check_line(inner, workspace, depth + 1)
        _check_simple(words, workspace, depth)


def _simple_commands(tokens: list[str]) -> Iterable[tuple[list[str], list[str]]]:
    words: list[str] = []
    redirects: list[str] = []
    expect_target = False
    for token in tokens:
        if expect_target:
            redirects.append(token)
            expect_target = False
            continue
        if token in _SEPARATORS or (token and set(token) <= set(";&|(){}")):
            if words or redirects:
                yield words, redirects
            words, redirects = [], []
            continue
        if token in _REDIRECTS or (token and set(token) <= set("<>&|") and ">" in token):
            expect_target = True
            continue
        if token == "$":
            # "$" before "(" from "$(": the substitution body follows as its own command.
            if words or redirects:
                yield words, redirects
            words, redirects = [], []
            continue
        words.append(token)
    if words or redirects:
        yield words, redirects


def _substitutions(word: str) -> list[str]:
    """Bodies of ``$(...)`` inside a word that shlex kept whole (e.g. in double quotes)."""
    bodies: list[str] = []
    start = word.find("$(")
    while start != -1:
        depth = 0
        end = -1
        for index in range(start + 1, len(word)):
            char = word[index]
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    end = index
                    break
        if end == -1:
            bodies.append(word[start + 2 :])
            break
        bodies.append(word[start + 2 : end])
        start = word.find("$(", end)
    return bodies


def _check_redirect(target: str) -> None:
    if _is_device(target):
        raise _Refused(f"writing to the device {target} would destroy its contents")


def _is_device(path: str) -> bool:
    normal = _normalize(path)
    return (
        normal.startswith("/dev/")
        and normal not in _HARMLESS_DEVICES
        and not (normal.startswith(("/dev/fd/", "/dev/pts/", "/dev/shm/")))
    )


def _strip_wrappers(words: list[str]) -> list[str]:
    index = 0
    while index < len(words):
        word = words[index]
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            index += 1
            continue
        name = posixpath.basename(word)
        if name not in _WRAPPERS:
            break
        takes_arg = _WRAPPERS[name]
        index += 1
        operands = _WRAPPER_OPERANDS.get(name, 0)
        while index < len(words):
            option = words[index]
            if option == "--":
                index += 1
                break
            if option.startswith("-") and option != "-":
                index += 2 if option in takes_arg else 1
                continue
            if name == "env" and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", option):
                index += 1
                continue
            if operands:
                operands -= 1
                index += 1
                continue
            break
    return words[index:]


def _check_simple(words: list[str], workspace: str | None, depth: int) -> None:
    # env -S / --split-string carries a whole command line in one argument.
    for position, word in enumerate(words[:-1]):
        if posixpath.basename(word) == "env":
            for option_index in range(position + 1, len(words) - 1):
                if words[option_index] in ("-S", "--split-string"):
                    _check_line(words[option_index + 1], workspace, depth + 1)
    words = _strip_wrappers(words)
    if not words:
        return
    name = posixpath.basename(words[0])
    args = words[1:]

    if name in _SHELLS or name in ("su", "runuser"):
        script = _shell_script(name, args)
        if script is not None:
            _check_line(script, workspace, depth + 1)
        return
    if name == "eval":
        _check_line(" ".join(args), workspace, depth + 1)
        return
    if name in _POWER_COMMANDS:
        raise _Refused(f"{name} would stop or restart the machine")
    if name in ("init", "telinit") and args[:1] in (["0"], ["6"]):
        raise _Refused(f"{name} {args[0]} would stop or restart the machine")
    if name == "systemctl" and any(
        arg in ("poweroff", "reboot", "halt", "kexec", "emergency", "rescue") for arg in args
    ):
        raise _Refused("systemctl would stop or restart the machine")
    if name.startswith("mkfs") or name in _FORMAT_COMMANDS:
        raise _Refused(f"{name} formats a device and destroys its data")
    if name == "dd":
        for arg in args:
            if arg.startswith("of=") and _is_device(arg[3:]):
                raise _Refused(f"dd onto the device {arg[3:]} would destroy its contents")
        return
    if name in _DEVICE_WRITERS:
        operands = [arg for arg in args if not arg.startswith("-")]
        # tee and shred write every operand; cp, mv and install only the last one.
        targets = operands if name in ("tee", "shred") else operands[-1:]
        for target in targets:
            if _is_device(target):
                raise _Refused(f"{name} onto the device {target} would destroy its contents")
    if name in ("rm", "chmod", "chown", "chgrp"):
        _check_recursive(name, args, workspace)


def _shell_script(name: str, args: list[str]) -> str | None:
    for index, arg in enumerate(args):
        if arg == "--":
            return None
        if arg in ("-c", "--command") or (
            arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]
        ):
            return args[index + 1] if index + 1 < len(args) else ""
        if not arg.startswith("-") and name != "busybox":
            return None
    return None


def _check_recursive(name: str, args: list[str], workspace: str | None) -> None:
    recursive = False
    operands: list[str] = []
    options_done = False
    for arg in args:
        if options_done or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        elif arg == "--":
            options_done = True
        elif arg.startswith("--"):
            if arg == "--recursive":
                recursive = True
            if arg == "--no-preserve-root":
                raise _Refused(f"{name} --no-preserve-root is never allowed")
        elif ("r" in arg[1:] and name == "rm") or "R" in arg[1:]:
            recursive = True
    if not recursive:
        return
    for operand in operands:
        reason = _dangerous_target(operand, workspace)
        if reason is not None:
            raise _Refused(f"recursive {name} on {operand!r} would affect {reason}")


def _normalize(path: str) -> str:
    normal = posixpath.normpath(path) if path else path
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def _dangerous_target(operand: str, workspace: str | None) -> str | None:
    if operand == "":
        return None
    if "$" in operand and not operand.startswith("$HOME") and not operand.startswith("${HOME}"):
        if _PWD_VARS.match(operand):
            return "the whole current directory"
        return "a path that depends on a shell variable; write the path out literally"
    home = _HOME_VARS.match(operand)
    if operand.startswith("~") or home:
        rest = operand.split("/", 1)[1] if "/" in operand else ""
        if rest.strip("/") in ("", "*", ".", ".*") or _GLOB_CHARS.match(rest):
            return "a home directory"
        return None
    normal = _normalize(operand)
    if normal.startswith("/"):
        if normal == "/" or normal in ("/*", "/.*"):
            return "the whole filesystem"
        first = "/" + normal[1:].split("/", 1)[0]
        if _GLOB_CHARS.search(first):
            return "top-level system directories"
        tree = normal[:-2] if normal.endswith("/*") else normal
        if tree in _SYSTEM_TREES:
            return f"the system tree {tree}"
        if workspace is not None and (
            tree == workspace or workspace.startswith(tree.rstrip("/") + "/")
        ):
            return "the whole workspace"
        return None
    # Relative operands: the workspace itself, all of it, or something above it.
    if normal in (".", "*", ".*", "./*") or operand in ("./", "./*", "*", ".*"):
        return "the whole workspace"
    if normal == ".." or (normal.startswith("../") and set(normal.replace("/", "")) <= {".", "*"}):
        return "a directory containing the workspace"
    return None
