"""Commands that run another command: ``sudo``, ``env``, ``nohup``, ``timeout``, ``xargs``,
``parallel``, ``coproc``, ``systemd-run``… (:data:`_WRAPPERS`), and programs with an option
whose value is a command line (:data:`_COMMAND_OPTIONS`: ``tar --to-command=``, ``ssh -o
ProxyCommand=``, ``git -c core.sshCommand=``…).

These are tables a reader can extend: a wrapper is stripped, with the options that take a
value, before the wrapped command is checked; a command option's value is checked as a
line of its own.
"""

from __future__ import annotations

import posixpath
import re

from zcoder.tools.guard.model import _Stream, _Word
from zcoder.tools.guard.words import _ASSIGNMENT, _ansi_c

_PARALLEL_OPTIONS = frozenset(
    {
        "-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-I", "-d", "--delimiter",
        "--colsep", "-n", "-N", "--results", "--tmpdir", "--timeout", "--delay", "--joblog",
        "-L", "-P",
    }
)  # fmt: skip
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
    "busybox": frozenset(),
    "toybox": frozenset(),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "xargs": frozenset({"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file"}),
    "parallel": _PARALLEL_OPTIONS,
    # Deferred or detached: the command runs later, elsewhere or after the prompt returns.
    "coproc": frozenset(),
    "systemd-run": frozenset(
        {
            "-u", "--unit", "-p", "--property", "-H", "--host", "-M", "--machine",
            "--description", "--slice", "-E", "--setenv", "--on-active", "--on-boot",
            "--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar",
            "--timer-property", "--uid", "--gid", "--nice", "--working-directory",
            "--service-type", "--path-property", "--socket-property",
        }
    ),
    "screen": frozenset({"-S", "-c", "-t", "-e", "-p", "-T", "-h", "-s"}),
    "entr": frozenset(),
    "daemonize": frozenset({"-a", "-c", "-e", "-o", "-p", "-l", "-u", "-E"}),
    # Running a command under another identity, namespace, tracer or limit.
    "pkexec": frozenset({"--user"}),
    "setpriv": frozenset(),
    "unshare": frozenset(),
    "nsenter": frozenset({"-t", "--target", "-S", "-G"}),
    "chroot": frozenset({"--userspec", "--groups"}),
    "fakeroot": frozenset({"-l", "-s", "-i"}),
    "firejail": frozenset(),
    "strace": frozenset({"-o", "-p", "-e", "-s", "-u", "-a", "-E", "-P", "-I", "-b", "-X"}),
    "ltrace": frozenset({"-o", "-p", "-e", "-s", "-u", "-a", "-n", "-l", "-x"}),
    "systemd-inhibit": frozenset({"--what", "--who", "--why", "--mode"}),
    "xvfb-run": frozenset({"-n", "-s", "-f", "-e", "-p", "--server-num", "--server-args"}),
    "dbus-run-session": frozenset({"--config-file", "--dbus-daemon"}),
    "eatmydata": frozenset(),
    "nocache": frozenset(),
    "torsocks": frozenset(),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "numactl": frozenset(),
    "prlimit": frozenset({"-p", "--pid"}),
    "cgexec": frozenset({"-g"}),
    "faketime": frozenset({"-m", "-f"}),
}  # fmt: skip
_XARGS_LIKE = frozenset({"xargs", "parallel"})


# Wrappers whose first operands are not the command (timeout DURATION, flock FILE, …).
_WRAPPER_OPERANDS = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1, "chroot": 1, "faketime": 1}
# Wrappers with an option whose value is a whole command line (``env -S 'rm -rf ~'``).
_WRAPPER_COMMANDS: dict[str, tuple[str, ...]] = {
    "env": ("-S", "--split-string"),
    "flock": ("-c", "--command"),
    "entr": ("-s",),
    "systemd-run": (),
}


def _strip_wrappers(words: list[str]) -> tuple[list[str], bool]:
    """Drop leading assignments and wrappers; also say whether xargs was one of them."""
    index = 0
    xargs = False
    while index < len(words):
        word = words[index]
        if _ASSIGNMENT.match(word):
            index += 1
            continue
        name = posixpath.basename(word)
        if name not in _WRAPPERS:
            break
        xargs = xargs or name in _XARGS_LIKE
        takes_arg = _WRAPPERS[name]
        index += 1
        operands = _WRAPPER_OPERANDS.get(name, 0)
        while index < len(words):
            option = words[index]
            if option == "--":
                index += 1
                break
            if option.startswith("-") and option != "-":
                bundle_takes = re.fullmatch(r"-[A-Za-z]+", option) and f"-{option[-1]}" in takes_arg
                index += 2 if option in takes_arg or bundle_takes else 1
                continue
            if name == "env" and _ASSIGNMENT.match(option):
                index += 1
                continue
            if operands:
                operands -= 1
                index += 1
                continue
            break
        if name == "coproc":  # coproc [NAME] { commands; } as tree-sitter-bash splits it
            if index + 1 < len(words) and words[index + 1] in ("{", "("):
                index += 1
            if index < len(words) and words[index] in ("{", "("):
                index += 1
    return words[index:], xargs


_COMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    # program -> its options whose value is a command line it runs. "X=" prefixes are
    # matched on a word (git -c X=…, ssh -o X=…) and after "-o" in the same word.
    "tar": ("--to-command=", "--checkpoint-action=exec=", "--use-compress-program=", "-I"),
    "rsync": ("-e", "--rsh="),
    "ssh": ("ProxyCommand=", "LocalCommand=", "KnownHostsCommand="),
    "scp": ("-S", "ProxyCommand="),
    "sftp": ("-S", "ProxyCommand="),
    "git": ("core.sshCommand=", "core.pager=", "core.editor=", "core.fsmonitor="),
    "zip": ("-TT", "--unzip-command="),
    "script": ("-c", "--command="),
}


# program -> environment variables it reads as options: the variable's value stands where
# the option's would (GIT_WORK_TREE=~ git clean is git --work-tree=~ clean). A value of
# "words" is split into words put before the command's own arguments (TAR_OPTIONS).
_ENVIRONMENT_OPTIONS: dict[str, dict[str, str]] = {
    "git": {"GIT_WORK_TREE": "--work-tree=", "GIT_DIR": "--git-dir="},
    "tar": {"TAR_OPTIONS": "words"},
    "rsync": {"RSYNC_RSH": "--rsh="},
}


def _environment_options(name: str, variables: dict[str, _Word]) -> list[str]:
    """The options ``name`` takes from ``variables`` (the environment it is started in)."""
    found: list[str] = []
    for variable, option in _ENVIRONMENT_OPTIONS.get(name, {}).items():
        value = variables.get(variable)
        if value is None:
            continue
        found.extend(value.text.split() if option == "words" else [option + value.text])
    return found


def _command_options(name: str, args: list[str]) -> list[str]:
    """The command lines given in ``args`` as values of ``name``'s command options."""
    found: list[str] = []
    for index, arg in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else None
        for prefix in _COMMAND_OPTIONS.get(name, ()):
            if prefix.endswith("="):
                for candidate in (arg, arg[2:] if arg.startswith("-o") else ""):
                    if candidate.startswith(prefix):
                        found.append(candidate[len(prefix) :])
            elif following is not None and (
                arg == prefix
                or (len(prefix) == 2 and re.fullmatch(r"-[A-Za-z]+", arg) and arg[-1] == prefix[1])
            ):
                found.append(following)  # -c CMD, or the last of a bundle: -qc CMD
    return [f for f in found if f.strip()]


def _xargs_options(texts: list[str]) -> tuple[str | None, str | None]:
    """xargs's (or parallel's) replacement string (``-I R``, ``-i``…) and input delimiter
    (``-0``, ``-d X``); None for whitespace splitting."""
    replace: str | None = None
    delimiter: str | None = None
    for index, text in enumerate(texts):
        name = posixpath.basename(text)
        if name not in _XARGS_LIKE:
            continue
        takes = _WRAPPERS[name]
        position = index + 1
        while position < len(texts) and texts[position].startswith("-"):
            option = texts[position]
            following = texts[position + 1] if position + 1 < len(texts) else ""
            if option == "-I":
                replace = following
            elif option.startswith("-I"):
                replace = option[2:]
            elif option in ("-i", "--replace"):
                replace = "{}"
            elif option.startswith(("--replace=", "-i")):
                replace = option.split("=", 1)[1] if "=" in option else option[2:]
            elif option in ("-0", "--null"):
                delimiter = "\0"
            elif option in ("-d", "--delimiter"):
                delimiter = _ansi_c(following) or "\n"
            elif option.startswith("--delimiter="):
                delimiter = _ansi_c(option.split("=", 1)[1]) or "\n"
            position += 2 if option in takes else 1
        break
    return replace, delimiter


def _strip_words(words: list[_Word]) -> tuple[list[_Word], bool]:
    kept, xargs = _strip_wrappers([w.text for w in words])
    return words[len(words) - len(kept) :], xargs


def _xargs_words(
    words: list[_Word], stdin: _Stream, replace: str | None, delimiter: str | None
) -> list[_Word]:
    """The command xargs (or parallel) runs: ``words`` with the items of its input put in
    place of the replacement string, or after them; an unknown argument when the input is
    not known."""
    if stdin.text is None:
        return [*words, _Word("<arguments read by xargs>", known=False)]
    if delimiter is not None:
        items = [i for i in stdin.text.split(delimiter) if i]
    else:
        items = stdin.text.splitlines() if replace else stdin.text.split()
    marker = replace or "{}"
    if replace or any(marker in w.text for w in words):
        return [
            _Word(w.text.replace(marker, item)) if marker in w.text else w
            for item in items
            for w in words
        ]
    return words + [_Word(item) for item in items]
