"""The sysadmin guard: refuse catastrophic shell commands, warn about what it cannot see.

:func:`check_command` parses a command line with tree-sitter-bash (a real shell grammar)
and walks the tree: every simple command, in pipelines, lists, subshells, groups, loops,
``case`` branches, functions, command and process substitutions and here-documents. Each
word is resolved as the shell would: quoting (``r''m``, ``"rm"``, ``\\rm``), ANSI-C
strings (``$'\\x72\\x6d'``), brace expansion, variables assigned earlier in the same line
(``x=rm; $x -rf /``, ``IFS`` included), and command substitutions whose output can be
worked out from literals (``echo``, ``printf``, ``base64 -d``, ``base32 -d``, ``xxd -r
-p``, ``rev``, ``tr``, ``cat``). It follows ``eval``, ``sh -c``/``bash -c`` (with their
``$0``, ``$1``…), scripts fed to a shell on stdin (pipes, here-documents, here-strings,
``<(...)``, a file written earlier in the line), ``source``, aliases and functions defined
in the line, wrappers (``sudo``, ``env``, ``command``, ``busybox``, ``nohup``,
``timeout``…), ``xargs`` and GNU ``parallel`` (the command they run, with their input when
known), ``find -delete``/``-exec`` (its expression evaluated left to right, so an action
before its tests acts on everything), ``watch``, ``ssh`` and ``at`` command strings,
``read``, ``set --``, ``printf -v``, arrays and the environment a child shell inherits.
What runs later is checked as if it ran now: ``trap`` actions, ``coproc``, hook variables
(``PROMPT_COMMAND``, ``$(...)`` in ``PS0``-``PS4``, ``BASH_ENV``/``ENV``, pagers, editors,
``GIT_SSH_COMMAND``…), crontabs installed with ``crontab``, ``tmux``/``screen``/
``systemd-run``/``script -c``/``flock -c`` commands, and what is written into shell
start-up files and cron tables. Paths are normalised after expansion (``~``, ``~user`` and
``$HOME`` stand for a home, so ``~/..`` is /home and ``~/../..`` is /), relative paths are
also taken from where a ``cd`` earlier in the line went, and symbolic links made earlier
in the line or found on disk are followed. Each resulting command is checked against
tables a reader can extend: deleters (``_DELETERS``: rm, rmdir, unlink, shred, truncate,
tar --remove-files, zip -m, rsync --remove-source-files/--delete, git clean…), partitioning
and disk tools (``_DISK_TOOLS``), programs that kill by owner or pattern
(``_PROCESS_KILLERS``), files that run later (``_STARTUP_NAMES``…), interpreters' tree
deletions (``_CODE_TREE_DELETERS``, ``_CODE_HOMES``), and other ways to destroy a machine,
a home or the workspace. Two faults of tree-sitter-bash 0.25.1 are worked around here: it splits a
word at a backslash-newline (continuations are joined first, as bash does), and it can
crash on ``{`` followed by a four-byte UTF-8 character (those are parsed as U+FFFD).

Three verdicts (:class:`Verdict`):

* **refuse**: catastrophic (any deleter on ``/``, a system tree, a home, the workspace or
  what holds it; a partitioning or disk tool that writes; ``mkfs`` of a device; ``dd`` or a
  redirect onto a device; fork bombs; shutdown; ``chmod -R`` on ``/`` or a home (the
  workspace itself is the user's to change); ``kill -1``, ``killall5``, ``pkill -u
  root``; overwriting ``/etc/passwd``; a library call deleting a home or ``/`` in a
  ``python -c``/``node -e``/``perl -e``/``ruby -e`` one-liner…), and what the guard cannot see
  through where it matters most: a line it cannot parse, nesting too deep, oversized
  expansions, and a script it cannot read that comes out of a decoder (base64, xxd,
  openssl, gzip…) into a shell or ``eval``. Fail closed.
* **warn**: the guard cannot see what would run, but nothing says it is obfuscated: a
  command name taken from the environment or from a program's output (``$CMD``,
  ``$(cat file)``), a glob as the command name, a download piped into a shell (``curl |
  sh``), ``eval``/``sh -c`` of a variable or a program's output, ``xargs`` feeding
  unknown arguments to a recursive delete, a recursive delete of a path built from a
  variable the line does not set (refused when the path with that variable empty would
  be a catastrophe: ``rm -rf "$DIR"/``), ``find`` deleting under a system tree with a
  filter, ``python -c``/``perl -e`` one-liners that delete files or run commands, writes to
  shell start-up files and cron tables (``>> ~/.bashrc``, ``tee -a ~/.profile``, ``cp x
  ~/.bashrc``), ``BASH_ENV`` naming a file it cannot read, and a link made to a home or
  ``/``. The approval dialog shows the warning; the user decides.
* **allow**: nothing of the above.

It is a safety net for an assistant that asks before every command, not a sandbox: it
prefers a false refusal to a missed catastrophe, and never raises.
"""

from __future__ import annotations

import base64
import binascii
import os
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

__all__ = ["GuardVerdict", "Verdict", "check_command", "classify_command", "parse"]

_MAX_DEPTH = 8
_MAX_FIELDS = 4096
"""Brace expansion beyond this many words is refused rather than checked in part."""
_MAX_VALUE = 1 << 20
"""A variable's value beyond this many characters is refused rather than built."""

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
_CRITICAL_FILES = frozenset(
    {
        "/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/sudoers",
        "/etc/fstab", "/etc/crypttab",
    }
)  # fmt: skip
_POWER_COMMANDS = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})
_INTERPRETERS = {
    "python": "-c", "python2": "-c", "python3": "-c", "pypy3": "-c", "perl": "-e",
    "ruby": "-e", "node": "-e", "nodejs": "-e", "bun": "-e", "php": "-r", "lua": "-e",
    "Rscript": "-e",
}  # fmt: skip
# Library calls that delete a directory tree, in the languages above.
_CODE_TREE_DELETERS = (
    r"rmtree", r"remove_tree", r"rmSync", r"rmdirSync", r"fs\.rm", r"fs\.promises\.rm",
    r"rimraf(?:\.sync)?", r"rm_rf", r"rm_r", r"remove_dir", r"remove_entry(?:_secure)?",
    r"unlink(?=\s*\(.*recursive\s*=\s*TRUE)",
)  # fmt: skip
# Expressions for the home directory in the languages above.
_CODE_HOMES = (
    r"process\.env\.HOME", r"process\.env\[\s*[\"']HOME[\"']\s*\]",
    r"(?:require\(\s*[\"'](?:node:)?os[\"']\s*\)\.|\bos\.)?homedir\(\s*\)",
    r"os\.environ\[\s*[\"']HOME[\"']\s*\]", r"os\.environ\.get\(\s*[\"']HOME[\"']\s*\)",
    r"(?:os\.)?getenv\(\s*[\"']HOME[\"']\s*\)", r"(?:pathlib\.)?Path\.home\(\s*\)",
    r"\$ENV\{\s*[\"']?HOME[\"']?\s*\}", r"ENV\[\s*[\"']HOME[\"']\s*\]",
    r"ENV\.fetch\(\s*[\"']HOME[\"']\s*\)", r"Dir\.home(?:\(\s*\))?",
    r"\$_SERVER\[\s*[\"']HOME[\"']\s*\]", r"Sys\.getenv\(\s*[\"']HOME[\"']\s*\)",
)  # fmt: skip
_CODE_TREE_DELETE = re.compile(r"(?:" + "|".join(_CODE_TREE_DELETERS) + r")\b\s*\(?\s*")
_CODE_HOME = re.compile("|".join(_CODE_HOMES))
_CODE_EXPANDED = re.compile(
    r"(?:os\.path\.)?expanduser\(\s*(.+?)\s*\)$|File\.expand_path\(\s*(.+?)\s*\)$"
    r"|path\.resolve\(\s*(.+?)\s*\)$|glob\(\s*(.+?)\s*\)$|path\.expand\(\s*(.+?)\s*\)$"
)
_CODE_JOIN = re.compile(r"(?:os\.path|path|File|Path)\.join\(\s*(.*)\)$")
_RISKY_CODE = re.compile(
    r"rmtree|os\.remove|os\.unlink|os\.rmdir|removedirs|\.unlink\(|\bunlink\b|\brmdir\b"
    r"|os\.system|subprocess|popen|\bsystem\s*\(?|\bexec[lv]?p?e?\s*\(|`|child_process"
    r"|execSync|spawn|shell_exec|\bqx\b|os\.execute|os\.remove"
    r"|" + "|".join(_CODE_TREE_DELETERS)
)
_CODE_STRINGS = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")
_FORK_BOMB = re.compile(
    r"(?<![\w:.\-])([\w:.\-]+)\s*\(\)\s*\{[^}]*?\1\s*\|\s*\1\s*&?[^}]*\}\s*;?\s*\1"
)
_PWD_VARS = re.compile(r"^(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(/\*?)?$")
_VARIABLE_REF = re.compile(
    r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-]|\$\([^)]*\)|`[^`]*`"
)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
"""Characters of four UTF-8 bytes: after a "{" they can crash tree-sitter-bash 0.25.1
(tree-sitter/tree-sitter-bash#337, found here by fuzzing too). They are parsed as U+FFFD,
a word character like them; no verdict depends on which one it was."""
_GLOB_CHARS = re.compile(r"[*?\[]")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_BRACES = re.compile(r"\{([^{}]*)\}")
_DEFAULT_IFS = " \t\n"

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
_PROMPT_END = "ZCODER_PROMPT_END"
_MAX_CWDS = 16
"""Directories a line may cd into that are remembered (each adds a check per command)."""
_BACKTICKS = re.compile(r"(?<!\\)`((?:[^`\\]|\\.)*)`")
# Wrappers whose first operands are not the command (timeout DURATION, flock FILE, …).
_WRAPPER_OPERANDS = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1, "chroot": 1, "faketime": 1}
# Wrappers with an option whose value is a whole command line (``env -S 'rm -rf ~'``).
_WRAPPER_COMMANDS: dict[str, tuple[str, ...]] = {
    "env": ("-S", "--split-string"),
    "flock": ("-c", "--command"),
    "entr": ("-s",),
    "systemd-run": (),
}
# Variables whose value runs later: PROMPT_COMMAND before each prompt, $(...) in a prompt
# each time it is shown, BASH_ENV and ENV in every shell started, the others whenever the
# program that reads them starts a pager, an editor or ssh.
_HOOK_VARIABLES = {
    "PROMPT_COMMAND": "command", "PS0": "prompt", "PS1": "prompt", "PS2": "prompt",
    "PS3": "prompt", "PS4": "prompt", "BASH_ENV": "file", "ENV": "file",
    "GIT_SSH_COMMAND": "command", "GIT_PAGER": "command", "GIT_EDITOR": "command",
    "PAGER": "command", "MANPAGER": "command", "EDITOR": "command", "VISUAL": "command",
    "SUDO_EDITOR": "command", "LESSOPEN": "command", "SSH_ASKPASS": "command",
    "SUDO_ASKPASS": "command", "GIT_ASKPASS": "command", "GIT_EXTERNAL_DIFF": "command",
}  # fmt: skip
# tmux commands whose operands are a shell command, and their options that take a value.
_TMUX_RUNNERS = frozenset(
    {
        "new-session",
        "new",
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "respawn-pane",
        "respawnp",
        "respawn-window",
        "respawnw",
        "run-shell",
        "run",
        "display-popup",
        "popup",
        "send-keys",
        "send",
        "pipe-pane",
        "pipep",
    }
)
_TMUX_TAKES = frozenset(
    {"-c", "-e", "-F", "-n", "-s", "-t", "-x", "-y", "-l", "-w", "-T", "-L", "-S"}
)  # fmt: skip

# Commands that turn text into other text: what they print from a literal is worked out;
# when it cannot be, their output is treated as obfuscated.
_DECODERS = frozenset(
    {
        "base64", "base32", "basenc", "xxd", "od", "rev", "tr", "openssl", "gzip", "gunzip",
        "zcat", "bzip2", "bunzip2", "bzcat", "xz", "unxz", "xzcat", "zstd", "uudecode",
        "gpg", "iconv", "sed", "awk", "perl", "python", "python3", "printf",
    }
)  # fmt: skip
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c"})
# find: tests that select some files; without one, find acts on everything below.
_FIND_FILTERS = frozenset(
    {
        "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
        "-iregex", "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
        "-size", "-user", "-group", "-uid", "-gid", "-nouser", "-nogroup", "-empty",
        "-inum", "-samefile", "-links", "-perm", "-lname", "-ilname", "-newermt",
    }
)  # fmt: skip
_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
# find: its other primaries that take a value (-fprintf takes two).
_FIND_TAKES = {
    "-type": 1, "-xtype": 1, "-maxdepth": 1, "-mindepth": 1, "-fstype": 1, "-printf": 1,
    "-fprint": 1, "-fprint0": 1, "-fls": 1, "-context": 1, "-used": 1, "-files0-from": 1,
    "-fprintf": 2,
}  # fmt: skip
# Deleters that delete what find hands them whatever their options.
_FIND_DELETERS = frozenset({"rm", "srm", "wipe", "rmdir", "unlink", "shred", "truncate"})


class Verdict(StrEnum):
    """What the guard says about a command."""

    ALLOW = "allow"
    WARN = "warn"
    """The guard cannot see what would run; the approval dialog shows why."""
    REFUSE = "refuse"


@dataclass(frozen=True)
class GuardVerdict:
    """The guard's verdict on one command line, with the reason for anything but allow."""

    verdict: Verdict
    reason: str | None = None

    @property
    def refused(self) -> bool:
        return self.verdict is Verdict.REFUSE


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Word:
    """One word after expansion: its text (unknown parts keep their source text)."""

    text: str
    known: bool = True
    decoded: bool = False
    """An unknown part came out of a decoder (base64, xxd, …)."""
    script: _Stream | None = None
    """For ``<(...)``: what reading the file would give."""


@dataclass(frozen=True)
class _Stream:
    """Text flowing into a command (stdin, a script): known, or where it came from."""

    text: str | None
    decoded: bool = False
    downloaded: bool = False
    piped: bool = True
    """False when nothing feeds the command (a shell then reads the terminal)."""

    def describe(self) -> str:
        if self.downloaded:
            return "a download"
        if self.decoded:
            return "a decoder whose input the guard cannot see"
        return "a program's output or a file"


_UNKNOWN = _Stream(None)
_NO_INPUT = _Stream(None, piped=False)


@dataclass
class _Scope:
    """What the line defined so far: variables, aliases, functions, files written."""

    variables: dict[str, _Word] = field(default_factory=dict)
    """Values assigned in the line; unknown ones keep whether they came from a decoder."""
    arrays: dict[str, list[_Word]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    functions: dict[str, Node] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    positional: list[_Word] | None = None

    def with_env(self, env: dict[str, _Word]) -> _Scope:
        """This scope as a child process sees it with ``env`` added to its environment."""
        if not env:
            return self
        return _Scope(
            {**self.variables, **env},
            self.arrays,
            self.aliases,
            self.functions,
            self.files,
            self.positional,
        )

    def child(self, positional: list[_Word] | None) -> _Scope:
        return _Scope(
            self.variables, self.arrays, self.aliases, self.functions, self.files, positional
        )


@lru_cache(maxsize=1)
def _language() -> Language:
    return Language(tree_sitter_bash.language())


def parse(text: str) -> Node:
    """The tree-sitter-bash syntax tree of ``text`` (its root node); characters of four
    UTF-8 bytes are parsed as U+FFFD, which cannot crash the parser."""
    safe = _ASTRAL.sub("\ufffd", text)
    return Parser(_language()).parse(safe.encode("utf-8", "surrogatepass")).root_node


def _text(node: Node) -> str:
    data = node.text or b""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


def check_command(command: str, workspace: str | os.PathLike[str] | None = None) -> GuardVerdict:
    """The guard's verdict on ``command``: refuse, warn (with why) or allow. Never raises.

    ``workspace`` (the canonical workspace path) lets the guard also refuse recursive
    deletion of the workspace by its absolute path or of one of its ancestors.
    """
    ws = posixpath.normpath(os.fspath(workspace)) if workspace is not None else None
    guard = _Guard(ws)
    try:
        guard.line(command, _Scope(), depth=0)
    except _Refused as refused:
        return GuardVerdict(Verdict.REFUSE, refused.reason)
    except RecursionError:
        return GuardVerdict(Verdict.REFUSE, "the command is nested too deeply to be checked safely")
    except Exception as exc:  # noqa: BLE001 - a guard that breaks must fail closed
        return GuardVerdict(Verdict.REFUSE, f"the guard could not check this command ({exc})")
    if guard.warnings:
        return GuardVerdict(Verdict.WARN, "; ".join(guard.warnings))
    return GuardVerdict(Verdict.ALLOW)


def classify_command(command: str, workspace: str | os.PathLike[str] | None = None) -> str | None:
    """Why the guard refuses ``command``, or None when it does not (it may still warn)."""
    verdict = check_command(command, workspace)
    return verdict.reason if verdict.refused else None


class _Guard:
    def __init__(self, workspace: str | None) -> None:
        self.workspace = workspace
        self.warnings: list[str] = []
        self.silent = 0
        """Above 0 while words are expanded only to learn their values."""
        self.calling: set[str] = set()
        """Functions and aliases being expanded (a recursive one is looked into once)."""
        self.links: dict[str, str] = {}
        """Symbolic links made earlier in the line: the link's path -> where it points."""
        self.cwds: list[str] = []
        """Directories ``cd`` went to earlier in the line (relative paths are checked from
        each, and from the workspace, since a ``cd`` may fail or run in a subshell)."""

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    # Lines and statements ------------------------------------------------------------

    def line(self, text: str, scope: _Scope, depth: int, stdin: _Stream = _NO_INPUT) -> None:
        if depth > _MAX_DEPTH:
            raise _Refused("the command nests shells or eval too deeply to be checked safely")
        if "\x00" in text:
            raise _Refused("the command contains a NUL byte")
        if _FORK_BOMB.search(text):
            raise _Refused("this is a fork bomb")
        root = parse(_join_continuations(text))
        if root.has_error:
            raise _Refused(
                f"the command could not be parsed safely ({_error_place(root)}); fix its quoting"
            )
        self.statements(root.named_children, scope, depth, stdin)

    def statements(
        self, nodes: list[Node], scope: _Scope, depth: int, stdin: _Stream = _NO_INPUT
    ) -> None:
        for node in nodes:
            self.statement(node, scope, depth, stdin)

    def statement(self, node: Node, scope: _Scope, depth: int, stdin: _Stream = _NO_INPUT) -> None:
        kind = node.type
        if kind == "command":
            self.command(node, scope, depth, stdin)
        elif kind == "variable_assignment":
            self.assign(node, scope, depth)
        elif kind == "declaration_command":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assign(child, scope, depth)
                    continue
                # export "NAME=value", export $N=value: an assignment once expanded.
                for word in self.expand(child, scope, depth):
                    if word.known and _ASSIGNMENT.match(word.text):
                        key, value = word.text.split("=", 1)
                        scope.variables[key] = _Word(value)
                        self.hook(key, scope.variables[key], scope, depth)
        elif kind == "pipeline":
            self.pipeline(node, scope, depth, stdin)
        elif kind == "redirected_statement":
            self.redirected(node, scope, depth, stdin)
        elif kind == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if name is not None and body is not None:
                scope.functions[_text(name)] = body
                # The body as written, arguments unknown; each call is checked again.
                self.statement(body, scope.child(None), depth, stdin)
        elif kind == "for_statement":
            variable = node.child_by_field_name("variable")
            for child in node.named_children:
                if child.type not in ("variable_name", "do_group"):
                    self.expand(child, scope, depth)
            if variable is not None:
                scope.variables[_text(variable)] = _Word(_text(variable), known=False)
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, scope, depth, stdin)
        elif kind in ("command_substitution", "process_substitution"):
            self.statements(node.named_children, scope, depth)
        elif kind in ("word", "raw_string", "number", "comment", "variable_name"):
            return
        elif kind in ("string", "concatenation", "simple_expansion", "expansion"):
            self.expand(node, scope, depth)
        else:
            # Lists, subshells, groups, if/while/case, tests, arithmetic, negation…
            for child in node.named_children:
                self.statement(child, scope, depth, stdin)

    def assign(self, node: Node, scope: _Scope, depth: int) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        key = _text(name)
        if value is None:
            scope.variables[key] = _Word("")
            return
        if value.type == "array":
            elements = [w for c in value.named_children for w in self.expand(c, scope, depth)]
            for element in elements:
                self.hook(key, element, scope, depth)
            scope.arrays[key] = elements
            scope.variables[key] = elements[0] if elements else _Word("")
            return
        scope.arrays.pop(key, None)
        words = self.expand(value, scope, depth, split=False)
        if words and len(words[0].text) > _MAX_VALUE:
            raise _Refused(f"the value of {key} grows too large to be checked")
        scope.variables[key] = words[0] if words else _Word("")
        self.hook(key, scope.variables[key], scope, depth)

    def hook(self, key: str, value: _Word, scope: _Scope, depth: int) -> None:
        """Check what a variable the shell runs later (PROMPT_COMMAND, PS1, BASH_ENV…) is
        set to, as if it ran now."""
        kind = _HOOK_VARIABLES.get(key)
        if kind is None or self.silent:
            return
        if value.decoded:
            raise _Refused(f"{key} is set to text out of a decoder the guard cannot see")
        text = value.text
        if kind == "file":
            content = scope.files.get(_normalize(text)) if value.known else None
            if content is not None:
                self.later(content, f"{key}={text}", scope, depth)
            elif "/" in text:  # ENV=production names no file: an application's setting
                self.warn(f"{key} makes every shell started later read {text}, unseen")
            return
        if kind == "prompt":
            # A prompt is expanded like a here-document's body: only $(...) and `...` run.
            text = f": <<{_PROMPT_END}\n{text}\n{_PROMPT_END}"
        else:
            # PROMPT_COMMAND="$PROMPT_COMMAND; history -a": its old value is not new.
            text = re.sub(r"\$\{?" + key + r"\b\}?", ":", text)
            if key == "LESSOPEN":
                text = text.lstrip("|").replace("%s", "x")
        self.later(text, key, scope, depth)

    def later(self, text: str, where: str, scope: _Scope, depth: int) -> None:
        """Check a script that runs later (a hook, a trap, a start-up file, a crontab line)."""
        try:
            self.line(text, scope.child(None), depth + 1)
        except _Refused as refused:
            if "(run later from " in refused.reason:
                raise
            raise _Refused(f"{refused.reason} (run later from {where})") from None

    def pipeline(self, node: Node, scope: _Scope, depth: int, stdin: _Stream) -> None:
        stream = stdin
        for stage in node.named_children:
            self.statement(stage, scope, depth, stream)
            stream = self.output(stage, scope, stream)

    def redirected(self, node: Node, scope: _Scope, depth: int, stdin: _Stream) -> None:
        body = node.child_by_field_name("body")
        stream = stdin
        targets: list[str] = []
        for child in node.named_children:
            if child == body:
                continue
            got, written = self.redirect(child, scope, depth)
            if got is not None:
                stream = got
            targets.extend(written)
        if body is not None:
            self.statement(body, scope, depth, stream)
            if targets:
                out = self.output(body, scope, stream)
                for target in targets:
                    if out.text is not None:
                        self.runs_later(target, out.text, scope, depth)
                        scope.files[target] = out.text
                    else:
                        scope.files.pop(target, None)

    def redirect(self, node: Node, scope: _Scope, depth: int) -> tuple[_Stream | None, list[str]]:
        """Check one redirection; return the stdin it gives and the files it writes."""
        kind = node.type
        if kind == "herestring_redirect":
            words = [w for c in node.named_children for w in self.expand(c, scope, depth, False)]
            if not words:
                return None, []
            word = words[0]
            if word.known:
                return _Stream(word.text + "\n"), []
            return _Stream(None, decoded=word.decoded), []
        if kind == "heredoc_redirect":
            stream: _Stream | None = None
            written: list[str] = []
            quoted = False
            for child in node.named_children:
                if child.type == "heredoc_start":
                    quoted = any(q in _text(child) for q in "'\"\\")
                elif child.type == "heredoc_body":
                    stream = self.heredoc(child, quoted, scope, depth)
                elif child.type == "file_redirect":
                    _, more = self.redirect(child, scope, depth)
                    written.extend(more)
            return stream, written
        if kind == "file_redirect":
            operator = "".join(_text(c) for c in node.children if not c.is_named)
            written = []
            stream = None
            for child in node.named_children:
                if child.type == "file_descriptor":
                    continue
                for word in self.expand(child, scope, depth, split=False):
                    writes = ">" in operator and "&" not in operator.replace("&>", "")
                    if writes or operator.startswith("&>"):
                        _check_redirect(word.text, append=">>" in operator)
                        written.append(_normalize(word.text))
                        later = _runs_later(word.text)
                        if later is not None:
                            self.warn(_later_warning("a redirection", word.text, later))
                    elif operator == "<&":
                        stream = _UNKNOWN  # another descriptor: opened elsewhere
                    elif operator == "<" and word.script is not None:
                        stream = word.script
                    elif operator == "<" and word.known:
                        known = scope.files.get(_normalize(word.text))
                        stream = _Stream(known) if known is not None else _UNKNOWN
            return stream, written
        self.statement(node, scope, depth)
        return None, []

    def heredoc(self, body: Node, quoted: bool, scope: _Scope, depth: int) -> _Stream:
        if quoted:
            return _Stream(_text(body))
        parts: list[str] = []
        known = True
        decoded = False
        start = body.start_byte
        raw = body.text or b""
        position = 0
        for child in body.named_children:
            if child.type == "heredoc_content":
                continue
            parts.append(raw[position : child.start_byte - start].decode("utf-8", "replace"))
            words = self.expand(child, scope, depth, split=False)
            for word in words:
                parts.append(word.text)
                known = known and word.known
                decoded = decoded or word.decoded
            position = child.end_byte - start
        parts.append(raw[position:].decode("utf-8", "replace"))
        text = "".join(parts)
        # tree-sitter-bash leaves `...` in an unquoted body as text; bash runs it.
        for match in _BACKTICKS.finditer(text):
            if not self.silent:
                self.line(_unescape_dquote(match.group(1)), scope, depth + 1)
        return _Stream(text) if known else _Stream(text if not decoded else None, decoded)

    # Words ---------------------------------------------------------------------------

    def expand(self, node: Node, scope: _Scope, depth: int, split: bool = True) -> list[_Word]:
        """The words ``node`` expands to (several with field splitting and braces)."""
        # "$@" and "${a[@]}" in quotes: one word per element.
        if node.type == "string" and len(node.named_children) == 1:
            elements = self.elements(node.named_children[0], scope)
            if elements is not None:
                return elements
        return self.split(self.segments(node, scope, depth, quoted=False), scope, split)

    def expand_group(self, nodes: list[Node], scope: _Scope, depth: int) -> list[_Word]:
        """One word written as several touching nodes (tree-sitter-bash splits ``a$b-c$d``
        after the second expansion, leaving a bare ``$`` and a word ``d…``)."""
        if len(nodes) == 1:
            return self.expand(nodes[0], scope, depth)
        segments: list[_Segment] = []
        for previous, node in zip([None, *nodes], nodes, strict=False):
            dangling = previous is not None and (
                previous.type == "$" or (previous.children and previous.children[-1].type == "$")
            )
            match = _VARIABLE_START.match(_text(node)) if node.type == "word" else None
            if dangling and match and segments and segments[-1].text == "$":
                segments.pop()
                name = match.group(0)
                segments.append(self.lookup(name, "$" + name, scope, quoted=False))
                segments.append(_Segment(_text(node)[match.end() :], literal=True))
                continue
            segments.extend(self.segments(node, scope, depth, quoted=False))
        return self.split(segments, scope, True)

    def split(self, segments: list[_Segment], scope: _Scope, split: bool) -> list[_Word]:
        words = _fields(segments, _ifs(scope)) if split else _join(segments)
        if split:
            words = [w for word in words for w in _brace_expand(word)]
        return words

    def segments(self, node: Node, scope: _Scope, depth: int, quoted: bool) -> list[_Segment]:
        kind = node.type
        if kind == "word":
            return [_Segment(_unescape_word(_text(node)), literal=True)]
        if kind == "number":
            return [_Segment(_text(node), literal=True)]
        if kind == "raw_string":
            return [_Segment(_text(node)[1:-1], literal=True, quoted=True)]
        if kind == "ansi_c_string":
            return [_Segment(_ansi_c(_text(node)[2:-1]), literal=True, quoted=True)]
        if kind in ("string", "translated_string"):
            out: list[_Segment] = []
            for child in node.named_children:
                if child.type == "string_content":
                    out.append(_Segment(_unescape_dquote(_text(child)), True, quoted=True))
                else:
                    out.extend(self.segments(child, scope, depth, quoted=True))
            if not out:
                out.append(_Segment("", literal=True, quoted=True))
            return out
        if kind == "concatenation":
            return [s for c in node.children for s in self.segments(c, scope, depth, quoted)]
        if kind in ("simple_expansion", "expansion"):
            return [self.variable(node, scope, depth, quoted)]
        if kind == "command_substitution":
            if not self.silent:
                self.statements(node.named_children, scope.child(scope.positional), depth)
            out_stream = self.substitution_output(node, scope)
            if out_stream.text is not None:
                return [_Segment(out_stream.text.rstrip("\n"), quoted=quoted)]
            return [_Segment(_text(node), quoted=quoted, known=False, decoded=out_stream.decoded)]
        if kind == "process_substitution":
            if not self.silent:
                self.statements(node.named_children, scope.child(scope.positional), depth)
            stream = self.substitution_output(node, scope)
            return [_Segment(_text(node), literal=True, known=False, script=stream)]
        if kind == "arithmetic_expansion":
            inner = _text(node)[3:-2].strip()
            if not self.silent:
                for child in node.named_children:
                    self.statement(child, scope, depth)
            if inner.isdigit():
                return [_Segment(str(int(inner)), quoted=quoted)]
            return [_Segment(_text(node), quoted=quoted, known=False)]
        if kind == "brace_expression":
            return [_Segment(_text(node), literal=True)]
        if not node.is_named:
            return [_Segment(_text(node), literal=True)]
        if not self.silent:
            self.statement(node, scope, depth)
        return [_Segment(_text(node), quoted=quoted, known=False)]

    def elements(self, node: Node, scope: _Scope) -> list[_Word] | None:
        """The words of ``$@`` or ``${array[@]}``, when the line set them."""
        text = _text(node)
        if text in ("$@", "${@}"):
            return list(scope.positional[1:]) if scope.positional is not None else None
        match = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}", text)
        if match and match.group(1) in scope.arrays:
            return list(scope.arrays[match.group(1)])
        return None

    def variable(self, node: Node, scope: _Scope, depth: int, quoted: bool) -> _Segment:
        source = _text(node)
        indexed = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[([@*]|[0-9]+)\]\}", source)
        if indexed and indexed.group(1) in scope.arrays:
            elements = scope.arrays[indexed.group(1)]
            index = indexed.group(2)
            chosen = elements if not index.isdigit() else elements[int(index) : int(index) + 1]
            return _Segment(
                " ".join(w.text for w in chosen),
                quoted=quoted,
                known=all(w.known for w in chosen),
                decoded=any(w.decoded for w in chosen),
            )
        names = [c for c in node.named_children if c.type in _VARIABLE_NODES]
        simple = (source.startswith("${") and len(node.children) == 3) or not source.startswith(
            "${"
        )
        if not names or not simple:
            # ${x:-default}, ${#x}, ${x/a/b}…: look inside, the value stays unknown.
            for child in node.named_children:
                if child.type not in _VARIABLE_NODES:
                    self.expand(child, scope, depth)
            return _Segment(source, quoted=quoted, known=False)
        return self.lookup(_text(names[0]), source, scope, quoted)

    def lookup(self, name: str, source: str, scope: _Scope, quoted: bool) -> _Segment:
        """The value of the variable ``name`` (written ``source``) as far as the line tells."""
        if name.isdigit() or name in ("@", "*"):
            positional = scope.positional
            if positional is None:
                return _Segment(source, quoted=quoted, known=False)
            if name in ("@", "*"):
                words = positional[1:]
            else:
                index = int(name)
                words = positional[index : index + 1] if index < len(positional) else []
                if not words:
                    return _Segment("", quoted=quoted)
            text = " ".join(w.text for w in words)
            known = all(w.known for w in words)
            decoded = any(w.decoded for w in words)
            return _Segment(text, quoted=quoted, known=known, decoded=decoded)
        if name in scope.variables:
            value = scope.variables[name]
            if not value.known:
                return _Segment(source, quoted=quoted, known=False, decoded=value.decoded)
            return _Segment(value.text, quoted=quoted)
        if name == "IFS":
            return _Segment(_DEFAULT_IFS, quoted=quoted)
        if name == "HOME":
            # Some home directory: "~" stands for it, so ``h=$HOME/..; rm -rf "$h"`` is seen.
            return _Segment("~", quoted=quoted)
        return _Segment(source, quoted=quoted, known=False)

    # What a command prints -----------------------------------------------------------

    def substitution_output(self, node: Node, scope: _Scope) -> _Stream:
        body = [c for c in node.named_children if c.type != "comment"]
        if len(body) != 1:
            return _UNKNOWN
        return self.output(body[0], scope, _UNKNOWN)

    def output(self, node: Node, scope: _Scope, stdin: _Stream) -> _Stream:
        """What ``node`` writes on stdout, when it can be worked out from literals."""
        kind = node.type
        if kind == "pipeline":
            stream = stdin
            for stage in node.named_children:
                stream = self.output(stage, scope, stream)
            return stream
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            stream = stdin
            for child in node.named_children:
                if child == body:
                    continue
                if child.type == "herestring_redirect":
                    words = [w for c in child.named_children for w in self.quiet([c], scope)]
                    if words and words[0].known:
                        stream = _Stream(words[0].text + "\n")
                    else:
                        stream = _Stream(None, decoded=any(w.decoded for w in words))
                elif child.type == "heredoc_redirect":
                    for part in child.named_children:
                        if part.type == "heredoc_body":
                            stream = _Stream(_text(part))
                elif child.type == "file_redirect" and any(_text(c) == "<" for c in child.children):
                    target = child.named_children[-1] if child.named_children else None
                    known = scope.files.get(_normalize(_text(target))) if target else None
                    stream = _Stream(known) if known is not None else _UNKNOWN
            return self.output(body, scope, stream) if body is not None else _UNKNOWN
        if kind != "command":
            return _UNKNOWN
        groups: list[list[Node]] = []
        stream = stdin
        for child in node.named_children:
            if child.type == "variable_assignment":
                continue
            if child.type == "herestring_redirect":
                inner = [w for c in child.named_children for w in self.quiet([c], scope)]
                if inner and inner[0].known:
                    stream = _Stream(inner[0].text + "\n")
                continue
            if child.type == "file_redirect":
                continue
            target = _operand(child)
            if target is None:
                continue
            if groups and groups[-1][-1].end_byte == target.start_byte:
                groups[-1].append(target)
            else:
                groups.append([target])
        words = _strip_words([w for group in groups for w in self.quiet(group, scope)])[0]
        if not words:
            return _UNKNOWN
        name = posixpath.basename(words[0].text) if words[0].known else ""
        args = words[1:]
        if name in _DOWNLOADERS:
            return _Stream(None, downloaded=True)
        decoded = name in _DECODERS or stream.decoded or any(w.decoded for w in args)
        result = _evaluate(name, args, stream, scope)
        if result is not None:
            # Still marked: what a decoder made stays suspect through later unknown stages.
            return _Stream(result, decoded=decoded)
        if name in ("cat", "tee") and (
            name == "tee" or not [a for a in args if not a.text.startswith("-")]
        ):
            return _Stream(stream.text, stream.decoded, stream.downloaded)
        return _Stream(None, decoded=decoded)

    def quiet(self, nodes: list[Node], scope: _Scope) -> list[_Word]:
        """Expand without walking or reporting (the nodes are checked where they run)."""
        saved = list(self.warnings)
        self.silent += 1
        try:
            return self.expand_group(nodes, scope, _MAX_DEPTH)
        except _Refused:
            return [_Word("".join(_text(n) for n in nodes), known=False)]
        finally:
            self.silent -= 1
            self.warnings = saved

    # Simple commands -----------------------------------------------------------------

    def command(self, node: Node, scope: _Scope, depth: int, stdin: _Stream) -> None:
        words: list[_Word] = []
        groups: list[list[Node]] = []
        env: dict[str, _Word] = {}
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                # In the environment of this command only (a shell it starts sees it).
                key = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                assigned = self.expand(value, scope, depth, split=False) if value else []
                if key is not None:
                    env[_text(key)] = assigned[0] if assigned else _Word("")
                    self.hook(_text(key), env[_text(key)], scope, depth)
                continue
            if kind in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                got, _ = self.redirect(child, scope, depth)
                if got is not None:
                    stdin = got
                continue
            target = _operand(child)
            if target is None:
                continue
            if groups and groups[-1][-1].end_byte == target.start_byte:
                groups[-1].append(target)
            else:
                groups.append([target])
        for group in groups:
            words.extend(self.expand_group(group, scope, depth))
        if words:
            self.simple(words, scope, depth, stdin, env)

    def simple(
        self,
        words: list[_Word],
        scope: _Scope,
        depth: int,
        stdin: _Stream,
        env: dict[str, _Word] | None = None,
    ) -> None:
        texts = [w.text for w in words]
        # env -S, flock -c…: a whole command line in one argument of a wrapper.
        for position, text in enumerate(texts[:-1]):
            options = _WRAPPER_COMMANDS.get(posixpath.basename(text), ())
            for index in range(position + 1, len(texts) - 1) if options else ():
                if texts[index] in options:
                    self.line(texts[index + 1], scope.child(None), depth + 1)
        replace, delimiter = _xargs_options(texts)
        words, xargs = _strip_words(words)
        stripped = texts[: len(texts) - len(words)]
        env = dict(env or {})
        for word in stripped:
            if _ASSIGNMENT.match(word):  # env NAME=value, sudo NAME=value
                key, value = word.split("=", 1)
                env[key] = _Word(value)
                self.hook(key, env[key], scope, depth)
        inner = scope.with_env(env)
        if ":::" in [w.text for w in words] and "parallel" in map(posixpath.basename, stripped):
            at = [w.text for w in words].index(":::")
            inputs = " ".join(w.text for w in words[at + 1 :] if w.text != ":::")
            words = words[:at]
            stdin = _Stream(inputs + "\n", stdin.decoded)
        if not words:
            if "parallel" in map(posixpath.basename, stripped):
                self.shell("sh", [], scope, depth, stdin)  # each input line is a command
            return
        # `command rm` and `builtin` skip functions and aliases of that name.
        bypass = any(posixpath.basename(t) in ("command", "builtin") for t in stripped)
        if xargs:
            if stdin.text is not None:
                if delimiter is not None:
                    items = [i for i in stdin.text.split(delimiter) if i]
                else:
                    items = stdin.text.splitlines() if replace else stdin.text.split()
                marker = replace or "{}"
                if replace or any(marker in w.text for w in words):
                    words = [
                        _Word(w.text.replace(marker, item)) if marker in w.text else w
                        for item in items
                        for w in words
                    ]
                else:
                    words = words + [_Word(item) for item in items]
            else:
                words = [*words, _Word("<arguments read by xargs>", known=False)]
        head = words[0]
        if not head.known and head.text.startswith(("(", "{")):
            return  # a subshell or group after `time`/`!`: walked as statements already
        if not head.known:
            self.warn(
                f"the command name {_short(head.text)} comes from "
                + ("a decoder" if head.decoded else "something the guard cannot see")
                + "; check what it is before approving"
            )
            if head.decoded:
                raise _Refused(f"the command name {_short(head.text)} is decoded at run time")
            self.catastrophes([w.text for w in words], scope, depth)
            return
        if _GLOB_CHARS.search(head.text):
            self.warn(
                f"the command name {_short(head.text)} is a pattern; the guard cannot tell "
                "which program it runs"
            )
        name = posixpath.basename(head.text)
        args = words[1:]
        if name in scope.aliases and not bypass and name not in self.calling:
            rest = " ".join(shlex.quote(w.text) if w.known else w.text for w in args)
            self.calling.add(name)
            try:
                self.line(f"{scope.aliases[name]} {rest}", scope, depth + 1, stdin)
            finally:
                self.calling.discard(name)
            return
        if name in scope.functions and not bypass and name in self.calling:
            # Recursion: with a pipeline or `&` anywhere in the cycle, it multiplies.
            cycle = [_text(scope.functions[f]) for f in self.calling if f in scope.functions]
            if any("|" in body or "&" in body for body in cycle):
                raise _Refused(
                    f"the function {name} calls itself through a pipeline or in the "
                    "background: a fork bomb"
                )
        if name in scope.functions and not bypass and name not in self.calling:
            self.calling.add(name)
            try:
                self.statement(scope.functions[name], scope.child([head, *args]), depth + 1, stdin)
            finally:
                self.calling.discard(name)
            return
        if name == "set" and args and not all(w.text.startswith(("-", "+")) for w in args):
            operands = args[1:] if args[0].text == "--" else args
            while operands and operands[0].text.startswith(("-", "+")):
                operands = operands[1:]
            scope.positional = [_Word("sh"), *operands]
            return
        if name == "read":
            self.read(args, scope, stdin, depth)
            return
        if name == "printf" and len(args) >= 3 and args[0].text == "-v":
            printed = _printf([w.text for w in args[2:]]) if all(w.known for w in args) else None
            scope.variables[args[1].text] = (
                _Word(printed) if printed is not None else _Word(args[1].text, known=False)
            )
            self.hook(args[1].text, scope.variables[args[1].text], scope, depth)
            return
        if name in ("at", "batch") and not any(w.text in ("-f", "-l", "-r", "-d") for w in args):
            self.shell("sh", [], scope, depth, stdin)
            return
        if name == "alias":
            for arg in args:
                if "=" in arg.text and arg.known:
                    alias, value = arg.text.split("=", 1)
                    scope.aliases[alias] = value
                    self.line(value, scope.child(None), depth + 1)
            return
        if name in _SHELLS or name in ("su", "runuser"):
            self.shell(name, args, inner, depth, stdin)
            return
        if name == "eval":
            joined = _Word(
                " ".join(w.text for w in args),
                known=all(w.known for w in args),
                decoded=any(w.decoded for w in args),
            )
            self.run_script(joined, "eval", inner, depth)
            return
        if name in ("source", "."):
            if args:
                self.script_file(args[0], scope, depth, name, stdin)
            return
        if re.fullmatch(r"python3\.[0-9]+|pypy3\.[0-9]+", name):
            name = "python3"
        if name in _INTERPRETERS:
            self.interpreter(name, args, scope, depth, stdin)
            return
        if name == "watch":
            command = _operands_after_options(args, {"-n", "--interval", "-d", "-x"})
            if command:
                self.line(" ".join(w.text for w in command), scope.child(None), depth + 1)
            return
        if name == "trap":
            self.trap(args, scope, depth)
            return
        if name == "crontab":
            self.crontab(args, scope, depth, stdin)
            return
        if name == "tmux":
            self.tmux(args, scope, depth)
            return
        if name in ("cd", "pushd"):
            self.change_directory(args)
            return
        if name == "tee" and stdin.text is not None:
            for target in _written_files("tee", [w.text for w in args]):
                self.runs_later(target, stdin.text, scope, depth)
        for value in _command_options(name, [w.text for w in args]):
            self.script(value, name, scope.child(None), depth)
        if name == "ssh":
            self.ssh(args, scope, depth)
            return
        if name == "find":
            self.find(args, scope, depth)
            return
        if name in ("awk", "gawk", "mawk", "nawk", "busybox-awk"):
            self.awk(args, scope, depth)
        if xargs and any(not w.known for w in args):
            self.xargs_unknown(name, [w.text for w in words[1:]])
        self.catastrophes([w.text for w in words], scope, depth)
        if name == "ln":
            self.link(args)

    def trap(self, args: list[_Word], scope: _Scope, depth: int) -> None:
        """``trap ACTION SIGNAL…`` runs ACTION later, on the signal or at exit."""
        operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if "--" in [w.text for w in args]:
            operands = args[[w.text for w in args].index("--") + 1 :]
        if not operands or operands[0].text == "-" or operands[0].text.isdigit():
            return
        action = operands[0]
        if action.known:
            self.later(action.text, "trap", scope, depth)
        else:
            self.run_script(action, "trap", scope.child(None), depth)

    def crontab(self, args: list[_Word], scope: _Scope, depth: int, stdin: _Stream) -> None:
        """``crontab -`` or ``crontab FILE`` installs a table whose commands cron runs."""
        texts = [w.text for w in args]
        if any(t in ("-l", "-r", "-e", "-T", "-V") for t in texts):
            return
        operands = _operands(texts, frozenset({"-u", "-c"}))
        if not operands or operands == ["-"]:
            text, source = stdin.text, stdin
        else:
            text, source = scope.files.get(_normalize(operands[0])), _UNKNOWN
        if text is not None:
            for command in _cron_commands(text, system=False):
                self.later(command, "crontab", scope, depth)
        elif source.decoded:
            raise _Refused("crontab would install a table out of a decoder the guard cannot see")
        elif source.downloaded:
            self.warn("crontab installs a table from a download the guard cannot read")

    def runs_later(self, target: str, text: str, scope: _Scope, depth: int) -> None:
        """``text`` is written to ``target``: check it when a shell or cron runs it later."""
        kind = _runs_later(target)
        if kind == "script":
            self.later(text, target, scope, depth)
        elif kind == "crontab":
            system = not _normalize(target).startswith("/var/spool/cron/")
            for command in _cron_commands(text, system):
                self.later(command, target, scope, depth)

    def tmux(self, args: list[_Word], scope: _Scope, depth: int) -> None:
        """tmux runs a shell command given to new-session, run-shell, send-keys…"""
        texts = [w.text for w in args]
        index = 0
        while index < len(texts) and texts[index].startswith("-"):
            if texts[index] == "-c" and index + 1 < len(texts):
                self.later(texts[index + 1], "tmux -c", scope, depth)
            index += 2 if texts[index] in ("-L", "-S", "-f", "-c") else 1
        if index >= len(texts) or texts[index] not in _TMUX_RUNNERS:
            return
        command = _operands(texts[index + 1 :], _TMUX_TAKES)
        keys = ("Enter", "C-m", "KPEnter", "C-j")
        command = [c for c in command if c not in keys]
        if command:
            self.later(" ".join(command), f"tmux {texts[index]}", scope, depth)

    def catastrophes(self, texts: list[str], scope: _Scope, depth: int) -> None:
        texts = texts[:1] + [self.through_links(t) for t in texts[1:]]
        _check_simple(texts, self.workspace, self.warn)
        # After a cd earlier in the line, relative paths may start there instead.
        stripped, _ = _strip_wrappers(texts)
        git = bool(stripped) and posixpath.basename(stripped[0]) == "git"  # has subcommands
        for cwd in self.cwds:
            moved = texts[:1] + [_in_directory(t, cwd) if _relative(t) else t for t in texts[1:]]
            _check_simple(texts if git else moved, self.workspace, self.warn, cwd)

    def change_directory(self, args: list[_Word]) -> None:
        """Remember where ``cd`` or ``pushd`` goes (a bare ``cd`` goes home)."""
        operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        target = operands[0] if operands else _Word("~")
        if not target.known or target.text in ("-", ""):
            return
        text = self.through_links(target.text)
        if _relative(text):
            base = self.cwds[-1] if self.cwds else self.workspace
            if base is None:
                return
            text = posixpath.join(base, text)
        if len(self.cwds) < _MAX_CWDS:
            self.cwds.append(text)

    def through_links(self, text: str) -> str:
        """``text`` with a link made earlier in the line replaced by where it points."""
        if not self.links or not text:
            return text
        normal = _normalize(text)
        for link, target in self.links.items():
            # The link itself (``rm -rf h``) is only the link; ``h/`` and ``h/*`` go through.
            if (normal == link and text.endswith("/")) or normal.startswith(link + "/"):
                return (target.rstrip("/") + normal[len(link) :]) or "/"
        return text

    def link(self, args: list[_Word]) -> None:
        """Remember the links ``ln`` makes; warn when one leads to a catastrophic target
        (``ln -s ~ h``: deleting ``h/*`` later deletes the home)."""
        texts = [w.text for w in args]
        operands = _operands(texts, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
        directory = next(
            (texts[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-t", "--target-directory")),
            None,
        )
        if directory is not None:
            pairs = [(t, posixpath.join(directory, posixpath.basename(t))) for t in operands]
        elif len(operands) == 1:
            pairs = [(operands[0], posixpath.basename(operands[0].rstrip("/")) or ".")]
        elif len(operands) == 2:
            pairs = [(operands[0], operands[1])]
        else:
            pairs = [
                (t, posixpath.join(operands[-1], posixpath.basename(t))) for t in operands[:-1]
            ]
        for target, link in pairs:
            self.links[_normalize(link)] = target
            reason = _dangerous_target(target, self.workspace)
            if reason is not None and reason not in _WORKSPACE_ITSELF:
                self.warn(
                    f"ln makes {link!r} lead to {reason}; whatever deletes through it deletes there"
                )

    def shell(
        self, name: str, args: list[_Word], scope: _Scope, depth: int, stdin: _Stream
    ) -> None:
        index = 0
        while index < len(args):
            arg = args[index].text
            if arg in ("-c", "--command") or (
                arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]
            ):
                if index + 1 >= len(args):
                    return
                script = args[index + 1]
                positional = args[index + 2 :]
                self.run_script(script, f"{name} -c", scope.child(positional or None), depth)
                return
            if arg in ("-s", "-", "--"):
                break
            if arg.startswith("-") or arg.startswith("+") or name in ("su", "runuser"):
                index += 1
                if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                    index += 1
                continue
            # A script operand: the rest are its arguments.
            self.script_file(args[index], scope, depth, name, stdin)
            return
        if name in ("su", "runuser"):
            return
        # No -c and no script: the shell reads its script from stdin.
        if stdin.text is not None:
            self.script(stdin.text, name, scope.child(None), depth)
        elif stdin.piped:
            self.run_script(_Word("", False, stdin.decoded), name, scope, depth, stdin)

    def script_file(
        self, word: _Word, scope: _Scope, depth: int, runner: str, stdin: _Stream = _NO_INPUT
    ) -> None:
        if word.script is not None:
            stream = word.script
            if stream.text is not None:
                self.script(stream.text, runner, scope.child(None), depth)
            else:
                self.run_script(_Word("", False, stream.decoded), runner, scope, depth, stream)
            return
        if word.known and _normalize(word.text) in _STDIN_FILES:
            self.shell(runner if runner in _SHELLS else "sh", [], scope, depth, stdin)
            return
        if word.known and _normalize(word.text).startswith(("/dev/fd/", "/proc/self/fd/")):
            self.warn(f"{runner} reads its script from {word.text}, which the guard cannot see")
            return
        if word.known:
            content = scope.files.get(_normalize(word.text))
            if content is not None:
                self.script(content, runner, scope.child(None), depth)

    def script(self, text: str, runner: str, scope: _Scope, depth: int) -> None:
        """Check the script ``runner`` runs; a refusal says what the script was."""
        try:
            self.line(text, scope, depth + 1)
        except _Refused as refused:
            if "(in the script " in refused.reason or text.strip() in refused.reason:
                raise
            raise _Refused(
                f"{refused.reason} (in the script {runner} runs: {_short(text.strip())})"
            ) from None

    def run_script(
        self, script: _Word, what: str, scope: _Scope, depth: int, stream: _Stream | None = None
    ) -> None:
        """Check a script run by a shell or eval; warn or refuse when it cannot be read."""
        text = script.text
        if script.known:
            self.script(text, what, scope, depth)
            return
        if script.decoded:
            raise _Refused(
                f"{what} would run a script that comes out of a decoder whose input the guard "
                "cannot see; decode it first and show the command"
            )
        # Whatever parts are visible are still checked (their own warnings say no more).
        if text:
            saved = list(self.warnings)
            try:
                self.line(text, scope, depth + 1)
            except _Refused as refused:
                if "parsed" not in refused.reason:
                    raise
            finally:
                self.warnings = saved
        if stream is not None:
            self.warn(f"{what} runs a script from {stream.describe()} that the guard cannot read")
        else:
            self.warn(f"{what} runs {_short(text)}, whose text the guard cannot see")

    def interpreter(
        self, name: str, args: list[_Word], scope: _Scope, depth: int, stdin: _Stream
    ) -> None:
        """``python -c``, ``perl -e``…: look for commands and deletions in the code."""
        flag = _INTERPRETERS[name]
        code: str | None = None
        from_stdin = True
        for index, arg in enumerate(args):
            text = arg.text
            if re.fullmatch(r"-[A-Za-z]*" + flag[1], text) and not text.startswith(("-M", "-I")):
                code = args[index + 1].text if index + 1 < len(args) else ""
                from_stdin = False
                break
            if text == "-":
                break
            if not text.startswith("-") or text == "-m":
                return  # a script file or a module
        if from_stdin:
            code = stdin.text
            if code is None and stdin.piped:
                if stdin.decoded:
                    raise _Refused(
                        f"{name} would run code that comes out of a decoder whose input the "
                        "guard cannot see"
                    )
                self.warn(f"{name} runs code from {stdin.describe()} that the guard cannot read")
        if code is None:
            return
        for match in _CODE_STRINGS.finditer(code):
            literal = match.group(1) if match.group(1) is not None else match.group(2)
            if _is_device(literal):
                self.warn(f"the {name} code names the device {literal}; read it before approving")
        for match in _CODE_TREE_DELETE.finditer(code):
            argument = _code_argument(code[match.end() :])
            path = _code_path(argument)
            reason = _dangerous_target(path, self.workspace) if path is not None else None
            if reason is not None:
                raise _Refused(f"{name} code deleting {argument!r} would affect {reason}")
        if not _RISKY_CODE.search(code):
            return
        for match in _CODE_STRINGS.finditer(code):
            literal = match.group(1) if match.group(1) is not None else match.group(2)
            if " " in literal:
                try:
                    self.line(literal, scope.child(None), depth + 1)
                except _Refused as refused:
                    if "parsed" not in refused.reason:
                        raise
            elif posixpath.isabs(literal) or literal.startswith("~"):
                reason = _dangerous_target(literal, self.workspace)
                if reason is not None and re.search(r"rmtree|rmdir|remove", code):
                    raise _Refused(f"{name} code deleting {literal!r} would affect {reason}")
        self.warn(f"the {name} code deletes files or runs commands; read it before approving")

    def read(self, args: list[_Word], scope: _Scope, stdin: _Stream, depth: int) -> None:
        """``read`` assigns what it reads: known when stdin is."""
        names: list[str] = []
        array: str | None = None
        index = 0
        while index < len(args):
            text = args[index].text
            if text in ("-p", "-d", "-n", "-N", "-t", "-u", "-i"):
                index += 2
                continue
            if text == "-a" and index + 1 < len(args):
                array = args[index + 1].text
                index += 2
                continue
            if not text.startswith("-"):
                names.append(text)
            index += 1
        line = stdin.text.split("\n", 1)[0] if stdin.text is not None else None
        if array is not None:
            scope.arrays[array] = (
                [_Word(f) for f in line.split()] if line is not None else [_Word("", False)]
            )
        names = names or ["REPLY"]
        fields = line.split(None, len(names) - 1) if line is not None else []
        for position, key in enumerate(names):
            if line is None:
                scope.variables[key] = _Word("$" + key, known=False, decoded=stdin.decoded)
            else:
                scope.variables[key] = _Word(fields[position] if position < len(fields) else "")
                self.hook(key, scope.variables[key], scope, depth)

    def awk(self, args: list[_Word], scope: _Scope, depth: int) -> None:
        """awk programs run commands with system("…") and print | "…"."""
        takes = {"-f", "-v", "-F", "--file", "--assign", "--field-separator"}
        operands = _operands_after_options(args, takes)
        if not operands or any(w.text in ("-f", "--file") for w in args):
            return
        program = operands[0].text
        literals = [m.group(1) for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', program)]
        commands = re.findall(r'(?:system\s*\(|(?<!\|)\|(?!\|)&?)\s*"((?:[^"\\]|\\.)*)"', program)
        for command in commands:
            self.script(command, "awk", scope.child(None), depth)
        to_shell = any(posixpath.basename(c.split(" ", 1)[0]) in _SHELLS for c in commands)
        if to_shell or re.search(r'system\s*\(\s*[^"\s]', program):
            # print … | "sh", or system(variable): any string may be the command.
            for literal in literals:
                if literal not in commands:
                    self.script(literal, "awk", scope.child(None), depth)
        if commands or re.search(r"system\s*\(|(?<!\|)\|(?!\|)&?\s*[A-Za-z_$]", program):
            self.warn("the awk program runs commands; read it before approving")

    def ssh(self, args: list[_Word], scope: _Scope, depth: int) -> None:
        takes = {"-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-E", "-m"}
        index = 0
        while index < len(args) and args[index].text.startswith("-"):
            index += 2 if args[index].text in takes else 1
        remote = args[index + 1 :]
        if remote:
            self.line(" ".join(w.text for w in remote), scope.child(None), depth + 1)

    def find(self, args: list[_Word], scope: _Scope, depth: int) -> None:
        texts = [w.text for w in args]
        follow = False  # -H and -L follow a link given as a start, -P (the default) not
        while texts and (texts[0] in ("-H", "-L", "-P", "-D") or re.fullmatch(r"-O\d", texts[0])):
            follow = texts[0] in ("-H", "-L") or (follow and texts[0] != "-P")
            texts = texts[2:] if texts[0] == "-D" else texts[1:]
        starts: list[str] = []
        for text in texts:
            if text.startswith("-") or text in ("(", ")", "!", ","):
                break
            starts.append(self.through_links(text.rstrip("/") + "/" if follow else text))
        expression = texts[len(starts) :]
        if not starts:
            starts = ["."]
        items: list[str] = []
        index = 0
        while index < len(expression):
            text = expression[index]
            index += 1
            if text in ("(", "\\(", ")", "\\)", "-o", "-or", ","):
                items.append(text.lstrip("\\").replace("-or", "-o"))
            elif text == "-delete":
                items.append("delete")
            elif text in ("-exec", "-execdir", "-ok", "-okdir"):
                command: list[str] = []
                while index < len(expression) and expression[index] not in (";", "+", "\\;"):
                    command.append(expression[index])
                    index += 1
                index += 1
                items.append("delete" if self.find_exec(command, scope, depth) else "other")
            elif text in _FIND_FILTERS:
                items.append("filter")
                index += 0 if text in ("-empty", "-nouser", "-nogroup") else 1
            else:
                index += _FIND_TAKES.get(text, 0)
        deletes = "delete" in items
        if not deletes:
            return
        unfiltered = _find_deletes_unfiltered(items)
        starts += [_in_directory(s, cwd) for cwd in self.cwds for s in starts if _relative(s)]
        for start in starts:
            reason = _dangerous_target(start, self.workspace)
            if reason is None:
                continue
            if unfiltered:
                raise _Refused(
                    f"find {start} deleting what it finds would affect {reason}"
                    + (" (the action comes before its tests)" if "filter" in items else "")
                )
            if reason.startswith(("the whole filesystem", "the system tree", "top-level")):
                self.warn(f"find deletes files under {start!r} ({reason}); check its tests")

    def find_exec(self, command: list[str], scope: _Scope, depth: int) -> bool:
        """Check the command of ``find -exec``; whether it deletes or changes what it finds."""
        if not command:
            return False
        inner = posixpath.basename(command[0])
        if inner in _SHELLS and "-c" in command:
            at = command.index("-c")
            if at + 1 < len(command):
                self.line(command[at + 1], scope.child(None), depth + 1)
                return bool(re.search(r"\b(?:rm|shred|unlink|rmdir|truncate)\b", command[at + 1]))
            return False
        if "{}" not in command[0]:
            _check_simple([c for c in command if c != "{}"], self.workspace, self.warn)
        arguments = command[1:]
        return bool(
            (inner in _DELETERS and (inner in _FIND_DELETERS or _deleted(inner, arguments)))
            or (inner in ("chmod", "chown", "chgrp") and _has_option(arguments, "-R"))
        )

    def xargs_unknown(self, name: str, args: list[str]) -> None:
        recursive = (
            any(
                a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a)
                for a in args
            )
            or "--recursive" in args
        )
        if name in ("shred", "dd") or (name in ("rm", "chmod", "chown", "chgrp") and recursive):
            self.warn(f"xargs gives {name} arguments the guard cannot see; check what it reads")


_VARIABLE_NODES = frozenset({"variable_name", "special_variable_name"})
_VARIABLE_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")


@dataclass(frozen=True)
class _Segment:
    text: str
    literal: bool = False
    """From the command as written (a word or a quoted string), not an expansion."""
    quoted: bool = False
    known: bool = True
    decoded: bool = False
    script: _Stream | None = None


def _ifs(scope: _Scope) -> str:
    value = scope.variables.get("IFS")
    return value.text if value is not None and value.known else _DEFAULT_IFS


def _fields(segments: list[_Segment], ifs: str) -> list[_Word]:
    """Field splitting: unquoted expansions split at IFS characters, literals never do."""
    fields: list[list[_Segment]] = [[]]
    for segment in segments:
        if segment.literal or segment.quoted or not segment.known or not ifs:
            fields[-1].append(segment)
            continue
        pieces = re.split("[" + re.escape(ifs) + "]", segment.text)
        for number, piece in enumerate(pieces):
            if number:
                fields.append([])
            if piece:
                fields[-1].append(_Segment(piece))
    words = []
    for parts in fields:
        if not parts:
            continue
        if not any(p.literal or p.quoted or p.text or not p.known for p in parts):
            continue
        words.extend(_join(parts))
    return words


def _join(segments: list[_Segment]) -> list[_Word]:
    if not segments:
        return []
    script = next((s.script for s in segments if s.script is not None), None)
    return [
        _Word(
            "".join(s.text for s in segments),
            known=all(s.known for s in segments),
            decoded=any(s.decoded for s in segments),
            script=script,
        )
    ]


def _brace_expand(word: _Word) -> list[_Word]:
    if not word.known or "{" not in word.text:
        return [word]
    match = _BRACES.search(word.text)
    if match is None or "," not in match.group(1):
        return [word]
    before, after = word.text[: match.start()], word.text[match.end() :]
    results: list[_Word] = []
    for choice in match.group(1).split(","):
        results.extend(_brace_expand(_Word(before + choice + after)))
        if len(results) > _MAX_FIELDS:
            raise _Refused("the command's brace expansion is too large to be checked")
    return results


def _unescape_word(text: str) -> str:
    text = text.replace("\\\n", "")
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _unescape_dquote(text: str) -> str:
    text = text.replace("\\\n", "")
    return re.sub(r"\\([$`\"\\])", r"\1", text)


_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL
)


def _ansi_c(text: str) -> str:
    """Decode the escapes of ``$'...'`` (and of ``echo -e``/``printf``)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU" and len(code) > 1:
            try:
                return chr(int(code[1:], 16))
            except (ValueError, OverflowError):
                return ""
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1].upper()) ^ 0x40)
        return _ANSI_SIMPLE.get(code, "\\" + code)

    return _ANSI_ESCAPE.sub(one, text)


def _tr_set(spec: str) -> str:
    spec = _ansi_c(spec)
    out: list[str] = []
    index = 0
    while index < len(spec):
        if index + 2 < len(spec) and spec[index + 1] == "-":
            first, last = ord(spec[index]), ord(spec[index + 2])
            if last >= first and last - first < 512:
                out.extend(chr(c) for c in range(first, last + 1))
            index += 3
        else:
            out.append(spec[index])
            index += 1
    return "".join(out)


def _printf(args: list[str]) -> str | None:
    if not args:
        return None
    fmt, values = args[0], args[1:]
    if "%" not in fmt.replace("%%", ""):
        return _ansi_c(fmt).replace("%%", "%")
    out: list[str] = []
    position = 0
    rounds = 0
    while True:
        rounds += 1

        def one(match: re.Match[str]) -> str:
            nonlocal position
            spec = match.group(1)
            if spec == "%":
                return "%"
            value = values[position] if position < len(values) else ""
            position += 1
            return _ansi_c(value) if spec == "b" else value

        out.append(re.sub(r"%[-#0 +]*\d*(?:\.\d+)?([sbdiouxXc%])", one, _ansi_c(fmt)))
        if position >= len(values) or rounds > 64:
            break
    return "".join(out)


def _evaluate(name: str, args: list[_Word], stdin: _Stream, scope: _Scope) -> str | None:
    """The output of a text-producing command from literal input, or None."""
    if any(not w.known for w in args):
        return None
    texts = [w.text for w in args]
    options = [t for t in texts if t.startswith("-") and len(t) > 1]
    operands = [t for t in texts if not (t.startswith("-") and len(t) > 1)]
    if name == "echo":
        newline, escapes = True, False
        while texts and re.fullmatch(r"-[neE]+", texts[0]):
            newline = newline and "n" not in texts[0]
            escapes = "e" in texts[0] or (escapes and "E" not in texts[0])
            texts = texts[1:]
        body = " ".join(texts)
        return (_ansi_c(body) if escapes else body) + ("\n" if newline else "")
    if name == "printf":
        return _printf([t for t in texts if t != "--"])
    source = stdin.text
    if operands and name not in ("tr", "openssl"):
        source = scope.files.get(_normalize(operands[0]))
    if source is None:
        return None
    if name == "cat":
        return source
    try:
        if name in ("base64", "base32") and any(
            o in ("-d", "--decode", "-di", "-id") or (o.startswith("-") and "d" in o)
            for o in options
        ):
            compact = re.sub(r"\s+", "", source)
            if name == "base32":
                return base64.b32decode(compact).decode("utf-8", "replace")
            return base64.b64decode(compact + "=" * (-len(compact) % 4)).decode("utf-8", "replace")
        if name == "openssl" and "-d" in texts and ("base64" in texts or "-base64" in texts):
            if any(t in ("-in",) for t in texts):
                return None
            compact = re.sub(r"\s+", "", source)
            return base64.b64decode(compact + "=" * (-len(compact) % 4)).decode("utf-8", "replace")
        if name == "xxd" and any("r" in o for o in options) and any("p" in o for o in options):
            return binascii.unhexlify(re.sub(r"\s+", "", source)).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None
    if name == "rev":
        return "\n".join(line[::-1] for line in source.split("\n"))
    if name == "tr" and not options and len(operands) == 2:
        first, second = _tr_set(operands[0]), _tr_set(operands[1])
        if not first or not second:
            return None
        second = second + second[-1] * max(0, len(first) - len(second))
        return source.translate(str.maketrans(first, second[: len(first)]))
    return None


def _code_argument(code: str) -> str:
    """The first argument of a call whose opening is just before ``code``."""
    return code[: _code_end(code, ",;\n")].strip()


def _code_end(code: str, stops: str) -> int:
    """Where ``code`` reaches one of ``stops`` (or a closing bracket it did not open)
    outside quotes and brackets."""
    depth = 0
    quote = ""
    for index, char in enumerate(code):
        if quote:
            if char == quote and code[index - 1] != "\\":
                quote = ""
        elif char in "\"'`":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return index
            depth -= 1
        elif char in stops and depth == 0:
            return index
    return len(code)


def _code_path(expression: str) -> str | None:
    """The path a code expression names when it is made of string literals and the home
    directory (``process.env.HOME``, ``Path.home()``, ``os.path.join(HOME, "..")``…)."""
    expression = expression.strip()
    if _CODE_HOME.fullmatch(expression):
        return "~"
    literal = re.fullmatch(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'", expression)
    if literal is not None:
        return literal.group(1) if literal.group(1) is not None else literal.group(2)
    wrapped = _CODE_EXPANDED.match(expression)
    if wrapped is not None:
        return _code_path(next(g for g in wrapped.groups() if g is not None))
    joined = _CODE_JOIN.match(expression)
    pieces = _code_split(joined.group(1), ",") if joined else _code_split(expression, "+")
    if len(pieces) < 2:
        return None
    paths = [_code_path(piece) for piece in pieces]
    if any(p is None for p in paths):
        return None
    if joined:
        return posixpath.join(*[p for p in paths if p is not None])
    return "".join(p for p in paths if p is not None)


def _code_split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside quotes and brackets."""
    pieces: list[str] = []
    rest = text
    while rest:
        end = _code_end(rest, separator)
        pieces.append(rest[:end].strip())
        if end < len(rest) and rest[end] != separator:
            return [text]  # an unmatched closing bracket: not one expression
        rest = rest[end + 1 :]
    return pieces


def _operands_after_options(args: list[_Word], takes: set[str]) -> list[_Word]:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        index += 2 if args[index].text in takes else 1
    return args[index:]


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _error_place(root: Node) -> str:
    def first(node: Node) -> Node | None:
        if node.type == "ERROR" or node.is_missing:
            return node
        for child in node.children:
            found = first(child)
            if found is not None:
                return found
        return None

    bad = first(root)
    if bad is None:
        return "syntax error"
    if bad.is_missing:
        return f"missing {bad.type!r}"
    return f"syntax error near {_short(_text(bad))}"


def _join_continuations(text: str) -> str:
    """Remove backslash-newline pairs as bash does before splitting words.

    tree-sitter-bash splits a word there (``r\\<newline>m`` would be ``r`` and ``m``), bash
    joins it (``rm``). Pairs inside single quotes and comments are kept, as bash keeps them.
    """
    if "\\\n" not in text:
        return text
    out: list[str] = []
    index = 0
    quote = ""
    while index < len(text):
        char = text[index]
        if quote == "'":
            out.append(char)
            if char == "'":
                quote = ""
            index += 1
            continue
        if char == "\\" and index + 1 < len(text):
            if text[index + 1] == "\n":
                index += 2
                continue
            out.append(text[index : index + 2])
            index += 2
            continue
        if char == '"':
            quote = "" if quote == '"' else '"'
        elif char == "'" and not quote:
            quote = "'"
        elif char == "#" and not quote and (not out or out[-1][-1:] in " \t\n;&|()"):
            end = text.find("\n", index)
            end = len(text) if end == -1 else end
            out.append(text[index:end])
            index = end
            continue
        out.append(char)
        index += 1
    return "".join(out)


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


def _operand(node: Node) -> Node | None:
    """The node to expand for one child of a command (the name's word for command_name)."""
    if node.type == "command_name":
        return node.named_children[0] if node.named_children else None
    return node


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
    warn = warn or _ignore
    name = posixpath.basename(words[0])
    args = words[1:]
    if name in _POWER_COMMANDS:
        raise _Refused(f"{name} would stop or restart the machine")
    if name in ("init", "telinit") and args[:1] in (["0"], ["6"], ["1"], ["s"], ["S"]):
        raise _Refused(f"{name} {args[0]} would stop, restart or empty the machine")
    if name == "systemctl" and any(
        arg.removesuffix(".target")
        in ("poweroff", "reboot", "halt", "kexec", "emergency", "rescue")
        for arg in args
    ):
        raise _Refused("systemctl would stop or restart the machine")
    _check_kill(name, args)
    _check_disk_tool(name, args, workspace)
    if name == "dd":
        for arg in args:
            if arg.startswith("of=") and _is_device(arg[3:]):
                raise _Refused(f"dd onto the device {arg[3:]} would destroy its contents")
    blind = name in _BLIND_WRITERS or (
        name in ("cp", "install") and any(_normalize(a) in _HARMLESS_DEVICES for a in args)
    )
    for target in _written_files(name, args):
        if blind:
            _check_written_file(target, append=_has_option(args, "-a", "--append"))
        if _is_device(target) and name != "dd":
            raise _Refused(f"{name} onto the device {target} would destroy its contents")
        later = _runs_later(target)
        if later is not None:
            warn(_later_warning(name, target, later))
    if name == "mv":
        operands = _operands(args, _MV_TAKES)
        destination = _normalize(operands[-1]) if len(operands) >= 2 else ""
        if _is_device(destination) or destination in _HARMLESS_DEVICES:
            raise _Refused(
                f"mv onto {operands[-1]} deletes what is moved and replaces the device node"
            )
        for source in operands[:-1]:
            reason = _dangerous_target(source, workspace)
            if reason is not None:
                raise _Refused(f"moving {source!r} away would affect {reason}")
            if _normalize(source) in _CRITICAL_FILES:
                raise _Refused(
                    f"mv of {_normalize(source)} would lock users out or stop the machine booting"
                )
    for what, targets, recursive in _deleted(name, args):
        for target in targets:
            normal = _normalize(_expand_home(target))
            if normal in _CRITICAL_FILES:
                raise _Refused(
                    f"{name} of {normal} would lock users out or stop the machine booting"
                )
            if recursive:
                _check_tree(what, target, workspace, warn)
    if name == "git":
        _check_git(args, workspace, warn, cwd)
    if name in ("chmod", "chown", "chgrp"):
        _check_mode_change(name, args, workspace, warn)


def _find_deletes_unfiltered(items: list[str]) -> bool:
    """Whether a deleting action of find's expression (``items``: "filter", "delete",
    "other", "(", ")", "-o", ",") can run on a file no test has selected: find evaluates
    left to right, so ``-delete -name x`` deletes everything, and ``-name x -o -delete``
    deletes everything else."""

    def scan(position: int, selected: bool) -> tuple[int, bool, bool]:
        # -> (where the group ends, an unfiltered delete found, every branch filtered)
        start_selected = selected
        found = False
        every_branch = True
        while position < len(items):
            item = items[position]
            position += 1
            if item == ")":
                break
            if item in ("-o", ","):
                every_branch = every_branch and selected
                selected = start_selected
            elif item == "(":
                position, inner_found, inner_filtered = scan(position, selected)
                found = found or inner_found
                selected = selected or inner_filtered
            elif item == "filter":
                selected = True
            elif item == "delete" and not selected:
                found = True
        return position, found, every_branch and selected

    return scan(0, False)[1]


def _ignore(_: str) -> None:
    return None


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


def _relative(path: str) -> bool:
    """Whether a word is a relative path (not an option, an absolute path, a home path, a
    variable or ``name=value``)."""
    return bool(path) and not path.startswith(("-", "/", "~", "$", "+")) and "=" not in path


def _in_directory(path: str, directory: str | None) -> str:
    if directory is None or path.startswith(("/", "~", "$")):
        return path
    return posixpath.join(directory, path)


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


def _check_mode_change(
    name: str, args: list[str], workspace: str | None, warn: Callable[[str], None]
) -> None:
    """chmod, chown and chgrp -R: refused on /, system trees, homes and what holds the
    workspace; the workspace itself is the user's to change."""
    if "--no-preserve-root" in args:
        raise _Refused(f"{name} --no-preserve-root is never allowed")
    if not (_has_option(args, "-R", "--recursive")):
        return
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    if "--" in args:
        operands = [a for a in args[: args.index("--")] if not a.startswith("-")]
        operands += args[args.index("--") + 1 :]
    if len(operands) >= 2 and not any(a.startswith("--reference") for a in args):
        operands = operands[1:]  # the mode, or the owner and group
    for operand in operands:
        _check_tree(f"recursive {name}", operand, workspace, warn, workspace_ok=True)


_GIT_TAKES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


def _check_git(
    args: list[str], workspace: str | None, warn: Callable[[str], None], cwd: str | None = None
) -> None:
    """git clean deletes every untracked file of the tree it runs in: refused when that tree
    (-C, --work-tree, or where a cd went) or a path it is given is a catastrophic target."""
    directory: str | None = cwd
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option, _, value = args[index].partition("=")
        if option in _GIT_TAKES and not value:
            value = args[index + 1] if index + 1 < len(args) else ""
            index += 1
        if option == "-C":
            directory = value if directory is None else _in_directory(value, directory)
        elif option == "--work-tree":
            directory = value
        index += 1
    if args[index : index + 1] != ["clean"]:
        return
    rest = args[index + 1 :]
    if _has_option(rest, "-n", "--dry-run"):
        return
    what = "git clean"
    if directory is not None:
        _check_tree(what, directory, workspace, warn)
    for operand in _operands(rest, frozenset({"-e", "--exclude"})):
        _check_tree(what, _in_directory(operand, directory), workspace, warn)


# Partitioning and disk tools -------------------------------------------------------------


@dataclass(frozen=True)
class _DiskTool:
    """When a partitioning or disk tool destroys data. A word of ``dry`` makes it change
    nothing; any of ``writes`` changes the disk; else any of ``reads`` only lists; else
    ``otherwise`` decides (an editor given a device reads its commands from stdin)."""

    writes: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    dry: frozenset[str] = frozenset()
    otherwise: bool = True


_HELP = frozenset({"-h", "--help", "-V", "--version"})
_FORMATTER = _DiskTool(reads=frozenset({"--help"}))
# fmt: off
_DISK_TOOLS: dict[str, _DiskTool] = {
    "fdisk": _DiskTool(reads=_HELP | {"-l", "--list", "-s", "--getsz", "-x", "--list-details"}),
    "sfdisk": _DiskTool(
        writes=frozenset(
            {
                "--delete", "--append", "-a", "-N", "--wipe-partitions", "--relocate", "-r",
                "--reorder", "--part-type", "--part-uuid", "--part-label", "--part-attrs",
                "--disk-id", "-A", "--activate",
            }
        ),
        reads=_HELP | {
            "-l", "--list", "-d", "--dump", "-J", "--json", "-s", "--show-size", "-V",
            "--verify", "-F", "--list-free", "-g", "--show-geometry", "-T", "--list-types",
        },
        dry=frozenset({"-n", "--no-act"}),
    ),
    "gdisk": _DiskTool(reads=_HELP | {"-l"}),
    "cgdisk": _DiskTool(reads=_HELP),
    "cfdisk": _DiskTool(reads=_HELP),
    "fixparts": _DiskTool(reads=_HELP),
    "sgdisk": _DiskTool(
        writes=frozenset(
            {
                "-Z", "--zap-all", "-z", "--zap", "-o", "--clear", "-d", "--delete", "-n",
                "--new", "-N", "--largest-new", "-g", "--mbrtogpt", "-m", "--gpttombr", "-l",
                "--load-backup", "-t", "--typecode", "-c", "--change-name", "-G",
                "--randomize-guids", "-U", "--disk-guid", "-u", "--partition-guid", "-r",
                "--transpose", "-s", "--sort", "-A", "--attributes", "-R", "--replicate",
                "-e", "--move-second-header", "-h", "--hybrid",
            }
        ),
        reads=frozenset(
            {
                "-p", "--print", "-i", "--info", "-v", "--verify", "-O", "--print-mbr", "-L",
                "--list-types", "-b", "--backup", "-D", "--display-alignment", "-V",
                "--version", "--help",
            }
        ),
        dry=frozenset({"-P", "--pretend"}),
    ),
    "parted": _DiskTool(
        writes=frozenset(
            {
                "mklabel", "mktable", "mkpart", "mkpartfs", "rm", "resizepart", "resize",
                "rescue", "name", "set", "toggle", "disk_set", "disk_toggle", "mkfs", "move",
                "cp", "type",
            }
        ),
        reads=_HELP | {"-l", "--list", "print", "p", "align-check", "help", "version"},
    ),
    "wipefs": _DiskTool(
        writes=frozenset({"-a", "--all", "-o", "--offset"}),
        dry=frozenset({"-n", "--no-act"}),
        otherwise=False,
    ),
    "blkdiscard": _DiskTool(reads=_HELP),
    "cryptsetup": _DiskTool(
        writes=frozenset({"luksFormat", "erase", "luksErase", "luksKillSlot"}), otherwise=False
    ),
    "mdadm": _DiskTool(writes=frozenset({"--zero-superblock", "--create", "-C"}), otherwise=False),
    "pvcreate": _DiskTool(reads=_HELP),
    "pvremove": _DiskTool(reads=_HELP),
    "vgremove": _DiskTool(reads=_HELP),
    "lvremove": _DiskTool(reads=_HELP),
    "zpool": _DiskTool(writes=frozenset({"destroy", "labelclear", "create"}), otherwise=False),
    "vgcreate": _DiskTool(reads=_HELP),
    "hdparm": _DiskTool(
        writes=frozenset(
            {
                "--security-erase", "--security-erase-enhanced", "--write-sector",
                "--trim-sector-ranges", "--make-bad-sector", "--dco-restore",
            }
        ),
        otherwise=False,
    ),
    "nvme": _DiskTool(writes=frozenset({"format", "sanitize"}), otherwise=False),
    "sg_format": _DiskTool(reads=_HELP),
    "sg_sanitize": _DiskTool(reads=_HELP),
    "badblocks": _DiskTool(writes=frozenset({"-w"}), otherwise=False),
    "flashrom": _DiskTool(writes=frozenset({"-w", "--write", "-E", "--erase"}), otherwise=False),
}
# fmt: on
for _name in ("mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "mkudffs"):
    _DISK_TOOLS[_name] = _FORMATTER


def _disk_words(args: list[str], words: frozenset[str]) -> list[str]:
    """The words of ``args`` in ``words``: as written, before ``=``, or in a bundle."""
    found: list[str] = []
    for arg in args:
        key = arg.split("=", 1)[0]
        if arg in words or key in words:
            found.append(key)
        elif re.fullmatch(r"-[A-Za-z]{2,}", arg):
            found.extend(f"-{letter}" for letter in arg[1:] if f"-{letter}" in words)
    return found


def _may_be_device(word: str, workspace: str | None) -> bool:
    """Whether ``word`` names a device, or may (a variable, a substitution, a link to one)."""
    if "$" in word or "`" in word or _normalize(word).startswith("/dev/"):
        return True
    path = word if word.startswith("/") or workspace is None else posixpath.join(workspace, word)
    try:
        return os.path.realpath(path).startswith("/dev/")
    except (OSError, ValueError):
        return True


def _check_disk_tool(name: str, args: list[str], workspace: str | None) -> None:
    tool = _DISK_TOOLS.get(name) or (_FORMATTER if name.startswith("mkfs.") else None)
    if tool is None or _disk_words(args, tool.dry):
        return
    writes = _disk_words(args, tool.writes)
    if writes:
        raise _Refused(
            f"{name} {writes[0]} changes partitions or erases data on a disk; run it yourself "
            "if you mean it"
        )
    if _disk_words(args, tool.reads) or not tool.otherwise:
        return
    if tool is _FORMATTER:
        # A swap file or a disk image is a file; a device, or what may be one, is refused.
        words = [a for a in args if not a.startswith("-")]
        if not words or any(_may_be_device(w, workspace) for w in words):
            raise _Refused(f"{name} formats a device and destroys its data")
        return
    if _operands(args):
        raise _Refused(
            f"{name} edits partitions or erases data on a disk; run it yourself if you mean it"
        )


# Killing everything ----------------------------------------------------------------------

# Programs that signal the processes they select by name, owner or parent: their options
# whose value is the next word, and the options that select by owner and by parent.
_PROCESS_KILLERS: dict[str, frozenset[str]] = {
    "pkill": frozenset(
        {
            "-u", "--euid", "-U", "--uid", "-G", "--group", "-g", "--pgroup", "-P", "--parent",
            "-s", "--session", "-t", "--terminal", "-F", "--pidfile", "--signal", "--ns",
            "--nslist",
        }
    ),
    "killall": frozenset(
        {"-u", "--user", "-s", "--signal", "-o", "--older-than", "-y", "--younger-than"}
    ),
    "skill": frozenset({"-u", "--user", "-t", "--tty", "-p", "--pid", "-c", "--command"}),
}  # fmt: skip
_OWNER_OPTIONS = frozenset({"-u", "--euid", "-U", "--uid", "--user"})
_PARENT_OPTIONS = frozenset({"-P", "--parent"})
_ROOT_NAMES = frozenset({"root", "0"})
_PROCESS_NAMES = ("systemd", "sshd", "bash", "init", "kworker/0:1", "zcoder")
"""A pattern that matches all of these matches every process."""


def _check_kill(name: str, args: list[str]) -> None:
    if name == "killall5":
        raise _Refused("killall5 signals every process on the machine")
    if name == "kill":
        operands = [a for a in args if not a.startswith("-") or a == "-1"]
        if "-1" in operands[1:] or (operands and operands[-1] == "-1"):
            raise _Refused("kill -1 would kill every process you can signal")
        return
    takes = _PROCESS_KILLERS.get(name)
    if takes is None:
        return
    owners: list[str] = []
    parents: list[str] = []
    patterns: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        option, _, value = arg.partition("=")
        if arg.startswith("-") and len(arg) > 1:
            if option in takes and not value:
                value = args[index] if index < len(args) else ""
                index += 1
            elif option[:2] in takes and len(option) > 2 and not option.startswith("--"):
                option, value = option[:2], option[2:]  # -uroot
            if option in _OWNER_OPTIONS:
                owners.extend(value.split(","))
            elif option in _PARENT_OPTIONS:
                parents.extend(value.split(","))
            continue
        patterns.append(arg)
    if name == "skill":
        owners.extend(p for p in patterns if p in _ROOT_NAMES)
        patterns = [p for p in patterns if p not in _ROOT_NAMES]
    regex = name != "killall" or _has_option(args, "-r", "--regexp")
    for pattern in patterns:
        if regex and _matches_everything(pattern):
            raise _Refused(f"{name} {pattern!r} matches every process and would kill them all")
    if patterns:
        return
    if _ROOT_NAMES & set(owners):
        raise _Refused(f"{name} of every process of root would take the machine down")
    if "1" in parents:
        raise _Refused(f"{name} of every child of init would kill every service")


def _matches_everything(pattern: str) -> bool:
    try:
        compiled = re.compile(pattern)
    except re.error:
        return False
    return all(compiled.search(process) for process in _PROCESS_NAMES)


# Files written, and files that run later -------------------------------------------------

# Programs that write files: which operands they write ("all", "last", "in-place" for
# sed/perl -i) or the option that names the file written (dd of=, curl -o, wget -O).
_FILE_WRITERS: dict[str, str] = {
    "tee": "all", "sponge": "all", "truncate": "all", "cp": "last", "mv": "last",
    "install": "last", "ln": "last", "rsync": "last", "scp": "last", "sed": "in-place",
    "perl": "in-place", "dd": "of=", "curl": "-o", "wget": "-O", "shred": "all",
}  # fmt: skip
# Writers that replace a file with data that is not a prepared copy of it (cp /dev/null
# too): overwriting /etc/passwd that way is refused; cp, mv and sed -i of a prepared file
# are a system administrator's ordinary way to change one.
_BLIND_WRITERS = frozenset({"tee", "sponge", "truncate", "dd", "shred", "curl", "wget"})
_WRITER_TAKES = frozenset(
    {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g",
     "--group", "-s", "--size", "-r", "--reference", "-e", "--expression", "-f", "--file",
     "-n", "--iterations"}
)  # fmt: skip


def _written_files(name: str, args: list[str]) -> list[str]:
    """The files ``name args`` writes, as far as its words tell."""
    how = _FILE_WRITERS.get(name)
    if how is None:
        return []
    if how == "of=":
        return [a[3:] for a in args if a.startswith("of=")]
    if how in ("-o", "-O"):
        long = "--output" if how == "-o" else "--output-document"
        found = [a.split("=", 1)[1] for a in args if a.startswith(long + "=")]
        for index, arg in enumerate(args[:-1]):
            if arg in (how, long) or (re.fullmatch(r"-[A-Za-z]+", arg) and arg[-1] == how[1]):
                found.append(args[index + 1])  # -o FILE, or the last of a bundle: -so FILE
        return [f for f in found if f != "-"]
    takes = _WRITER_TAKES - {"-s"} if name != "truncate" else _WRITER_TAKES
    if name == "rsync":
        takes = _RSYNC_TAKES
    operands = _operands(args, takes)
    if how == "in-place":
        in_place = [a for a in args if a.startswith(("-i", "--in-place"))]
        if not in_place and not any(re.fullmatch(r"-[a-z]*i", a) for a in args):
            return []
        scripted = any(a in ("-e", "--expression", "-f", "--file") for a in args)
        return operands if scripted or name == "perl" else operands[1:]
    if how == "all":
        return operands
    if len(operands) < 2 and name == "ln":
        return []
    if len(operands) < 2:
        return []
    target = operands[-1]
    if target.endswith("/") or _home_reason(_normalize(_expand_home(target))):
        return [posixpath.join(target, posixpath.basename(s.rstrip("/"))) for s in operands[:-1]]
    return [target]


# Files a shell runs when it starts (at login, in every new shell): what is written to one
# runs later, unseen. Writing one is warned; a catastrophe written into one is refused.
_STARTUP_NAMES = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases",
        ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc",
        ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".xprofile", ".xinitrc",
        ".xsession", ".config/fish/config.fish",
    }
)  # fmt: skip
_STARTUP_FILES = frozenset(
    {
        "/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zshrc", "/etc/zshenv",
        "/etc/zprofile", "/etc/zlogin", "/etc/zsh/zshrc", "/etc/zsh/zshenv",
        "/etc/zsh/zprofile", "/etc/zsh/zlogin", "/etc/environment", "/etc/rc.local",
    }
)  # fmt: skip
_STARTUP_DIRS = ("/etc/profile.d/", "/etc/cron.hourly/", "/etc/cron.daily/",
                 "/etc/cron.weekly/", "/etc/cron.monthly/")  # fmt: skip
_CRONTAB_FILES = ("/etc/crontab", "/etc/cron.d/", "/var/spool/cron/")
_HOME_DIR = re.compile(r"/home/[^/*?\[]+|/root")


def _runs_later(path: str) -> str | None:
    """ "script" when ``path`` is a file a shell runs at start, "crontab" for cron's tables."""
    normal = _normalize(_expand_home(path))
    if normal in _STARTUP_FILES or normal.startswith(_STARTUP_DIRS):
        return "script"
    if normal == "/etc/crontab" or normal.startswith(_CRONTAB_FILES[1:]):
        return "crontab"
    for name in _STARTUP_NAMES:
        if normal.endswith("/" + name) and _HOME_DIR.fullmatch(normal[: -len(name) - 1]):
            return "script"
    return None


def _later_warning(how: str, target: str, kind: str) -> str:
    when = "cron runs on its schedule" if kind == "crontab" else "a shell runs when it starts"
    return f"{how} writes {target}, which {when}: check what goes into it before approving"


def _cron_commands(text: str, system: bool) -> list[str]:
    """The commands of a crontab's lines (a system crontab has a user field)."""
    commands: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or re.match(r"[A-Za-z_][A-Za-z0-9_]*\s*=", line):
            continue
        fields = line.split(None, (1 if line.startswith("@") else 5) + (1 if system else 0))
        if len(fields) < (2 if line.startswith("@") else 6):
            continue
        commands.append(re.split(r"(?<!\\)%", fields[-1], maxsplit=1)[0])
    return commands


def _check_redirect(target: str, append: bool = False) -> None:
    if _is_device(target):
        raise _Refused(f"writing to the device {target} would destroy its contents")
    _check_written_file(target, append)


def _check_written_file(target: str, append: bool) -> None:
    normal = _normalize(_expand_home(target))
    if normal == "/proc/sysrq-trigger":
        raise _Refused("writing to /proc/sysrq-trigger can crash or restart the machine at once")
    if normal in _CRITICAL_FILES and not append:
        raise _Refused(f"overwriting {normal} would lock users out or stop the machine booting")


def _is_device(path: str) -> bool:
    normal = _normalize(path)
    return (
        normal.startswith("/dev/")
        and normal not in _HARMLESS_DEVICES
        and not (normal.startswith(("/dev/fd/", "/dev/pts/", "/dev/shm/")))
    )


# Paths -------------------------------------------------------------------------------------

_HOME = "/home/~"
"""Where ``~``, ``~user`` and ``$HOME`` lead: a home directory whose real path the guard does
not know. Paths through it are normalised like any other: ``~/..`` is /home, ``~/../..`` /."""
_HOME_PREFIX = re.compile(r"^(?:~[^/]*|\$HOME|\$\{HOME\})(?=/|$)")
_WORKSPACE_ITSELF = frozenset({"the whole workspace", "the whole current directory"})


def _expand_home(path: str) -> str:
    match = _HOME_PREFIX.match(path)
    return _HOME + path[match.end() :] if match else path


def _normalize(path: str) -> str:
    normal = posixpath.normpath(path) if path else path
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def _home_reason(normal: str) -> str | None:
    """ "a home directory" when ``normal`` is a home, or everything in one (``~/*``, ``~/.*``,
    ``/home/alice/.[!.]*``)."""
    match = re.fullmatch(r"(/home/[^/*?\[]+)(?:/(.*))?", normal)
    if match is None:
        return None
    rest = match.group(2) or ""
    if rest in ("", ".") or ("/" not in rest and _GLOB_CHARS.match(rest.lstrip(".") or "x")):
        return "a home directory"
    if rest == ".*":
        return "a home directory"
    return None


def _dangerous_target(operand: str, workspace: str | None) -> str | None:
    """What deleting (or changing) ``operand`` with all below it would destroy, or None."""
    if operand == "":
        return None
    expanded = _expand_home(operand)
    if "$" in expanded:
        if _PWD_VARS.match(operand):
            return "the whole current directory"
        return "a path that depends on a shell variable; write the path out literally"
    reason = _dangerous_path(expanded, workspace)
    if reason is not None:
        return reason
    real = _on_disk(expanded, workspace)
    if real is not None:
        home = os.path.realpath(os.path.expanduser("~"))
        reason = _dangerous_path(real, workspace)
        if reason is None and home != "/" and (real == home or real.startswith(home + "/*")):
            reason = "a home directory"
        if reason is not None:
            return f"{reason} (through the symbolic link on the way to {real})"
    return None


def _dangerous_path(expanded: str, workspace: str | None) -> str | None:
    normal = _normalize(expanded)
    if normal.startswith("/"):
        if normal == "/" or normal in ("/*", "/.*"):
            return "the whole filesystem"
        first = "/" + normal[1:].split("/", 1)[0]
        if _GLOB_CHARS.search(first):
            return "top-level system directories"
        home = _home_reason(normal)
        if home is not None:
            return home
        tree = normal[:-2] if normal.endswith("/*") else normal
        if tree in _SYSTEM_TREES:
            return f"the system tree {tree}"
        if workspace is not None and tree == workspace:
            return "the whole workspace"
        if workspace is not None and workspace.startswith(tree.rstrip("/") + "/"):
            return "a directory containing the workspace"
        return None
    # Relative operands: the workspace itself, all of it, or something above it.
    if normal in (".", "*", ".*", "./*") or expanded in ("./", "./*", "*", ".*"):
        return "the whole workspace"
    if normal == ".." or (normal.startswith("../") and set(normal.replace("/", "")) <= {".", "*"}):
        return "a directory containing the workspace"
    return None


def _on_disk(path: str, workspace: str | None) -> str | None:
    """``path`` with the symbolic links on disk along it resolved, when there is one (a
    link made earlier, ``ln -s ~ h``, then ``rm -rf h/*``); relative paths are taken from
    the workspace."""
    if path.startswith(_HOME):
        return None
    if not path.startswith("/"):
        if workspace is None:
            return None
        path = posixpath.join(workspace, path)
    parts = path.split("/")
    fixed = next((i for i, part in enumerate(parts) if _GLOB_CHARS.search(part)), len(parts))
    if fixed == len(parts) and len(parts) > 1 and parts[-1] not in ("", ".", ".."):
        fixed -= 1  # a link named last is the link itself (rm -rf h), not where it leads
    prefix = "/".join(parts[:fixed]) or "/"
    try:
        real = os.path.realpath(prefix)
    except (OSError, ValueError):
        return None
    if real == _normalize(prefix):
        return None
    return posixpath.join(real, *parts[fixed:]) if fixed < len(parts) else real
