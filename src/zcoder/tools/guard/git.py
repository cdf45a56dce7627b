"""git: the rules on what git deletes or replaces, and the aliases and settings a git command
line makes that run commands later.

``git clean`` deletes every untracked file of the tree it runs in (``-C``, ``--work-tree``,
``GIT_WORK_TREE``, where a ``cd`` went); ``git push --force`` replaces what others pushed;
an alias whose value starts with "!" and settings such as ``core.sshCommand`` are shell
commands git runs later. Apart from :mod:`.deleters` because git's subcommands, options
and configuration are a language of their own.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from zcoder.tools.guard.deleters import _check_tree
from zcoder.tools.guard.model import _Command
from zcoder.tools.guard.options import _has_option, _operands
from zcoder.tools.guard.paths import _in_directory

_GIT_TAKES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


_GIT_CONFIG_TAKES = frozenset(
    {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--fixed-value"}
)
# Options of git config that read, unset or edit: no alias is set. (The subcommands of
# the newer syntax, get, list, unset…, stand where the alias's name would.)
_GIT_CONFIG_READS = frozenset(
    {
        "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--unset", "--unset-all",
        "-l", "--list", "-e", "--edit", "--remove-section", "--rename-section",
    }
)  # fmt: skip


def _git_options(args: list[str]) -> tuple[list[tuple[str, str]], int]:
    """git's own options before its subcommand, each with its value (``-C DIR``, ``-c
    KEY=VALUE``, ``--work-tree=DIR``), and where the subcommand stands in ``args``."""
    options: list[tuple[str, str]] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option, _, value = args[index].partition("=")
        if option in _GIT_TAKES and not value:
            value = args[index + 1] if index + 1 < len(args) else ""
            index += 1
        options.append((option, value))
        index += 1
    return options, index


@dataclass(frozen=True)
class _GitSetting:
    """A setting a git command line makes: ``-c KEY=VALUE`` for this command only, or
    ``git config [set] KEY VALUE`` for every later one. Keys are lower case, as git
    compares them."""

    key: str
    value: str
    given: bool
    """Given with ``-c`` (for this command only), not set with ``git config`` (for later)."""


@dataclass(frozen=True)
class _GitAlias:
    """An alias a git command line defines: ``git NAME`` then runs ``git VALUE``, or the
    shell command after a leading "!"."""

    name: str
    value: str
    given: bool
    """Given with ``-c`` (for this command only), not set with ``git config`` (for later)."""


# Settings whose value is a shell command git runs: when set with git config, it runs in
# every later git command that needs it; those of _GIT_UNASKED run with no editor or
# pager the user would notice (on every fetch, push or status), so setting one is warned.
_GIT_COMMAND_KEYS = frozenset(
    {
        "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "core.askpass",
        "sequence.editor", "diff.external", "gpg.program", "credential.helper",
    }
)  # fmt: skip
_GIT_UNASKED = frozenset(
    {"core.sshcommand", "core.fsmonitor", "core.askpass", "core.hookspath", "credential.helper"}
)


def _git_runs_unasked(setting: _GitSetting) -> bool:
    """Whether a setting makes git run a command of the setting's choosing unasked: not
    ``core.fsmonitor true`` (git's own) nor a helper named plainly (``credential.helper
    store`` runs git's credential-store)."""
    value = setting.value.strip()
    if setting.key not in _GIT_UNASKED:
        return False
    if setting.key == "core.fsmonitor":
        return value.lower() not in ("true", "false", "yes", "no", "on", "off", "1", "0", "")
    if setting.key == "credential.helper":
        return value.startswith(("!", "/")) or " " in value
    return True


def _git_settings(args: list[str]) -> list[_GitSetting]:
    """The settings in git's arguments ``args``: ``-c KEY=VALUE`` among its options, and
    ``git config [set] KEY VALUE``."""
    settings: list[_GitSetting] = []
    options, index = _git_options(args)
    for option, value in options:
        key, assigned, setting = value.partition("=")
        if option == "-c" and assigned:
            settings.append(_GitSetting(key.lower(), setting, given=True))
    rest = args[index + 1 :]
    flags = {r.partition("=")[0] for r in rest if r.startswith("-")}
    if args[index : index + 1] != ["config"] or _GIT_CONFIG_READS & flags:
        return settings
    operands = _operands(rest, _GIT_CONFIG_TAKES)
    if operands[:1] == ["set"]:
        operands = operands[1:]
    if len(operands) >= 2:
        settings.append(_GitSetting(operands[0].lower(), operands[1], given=False))
    return settings


def _git_aliases(args: list[str]) -> list[_GitAlias]:
    """The aliases in git's arguments ``args``: ``-c alias.NAME=VALUE`` among its options,
    and ``git config [set] alias.NAME VALUE``. Names are case-insensitive, as git's are."""
    return [
        _GitAlias(s.key[6:], s.value, s.given)
        for s in _git_settings(args)
        if s.key.startswith("alias.")
    ]


def _git_commands_set(args: list[str]) -> list[_GitSetting]:
    """The settings ``git config`` makes whose value git runs later as a command (or, for
    ``core.hooksPath``, whose scripts it runs)."""
    return [
        s
        for s in _git_settings(args)
        if not s.given
        and (s.key in _GIT_COMMAND_KEYS or s.key in _GIT_UNASKED or s.key.startswith("pager."))
    ]


def _split(text: str) -> list[str]:
    """``text`` split into words as a shell would, or at white space when it cannot be."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _check_git(command: _Command) -> None:
    """git clean deletes every untracked file of the tree it runs in: refused when that tree
    (-C, --work-tree, or where a cd went) or a path it is given is a catastrophic target."""
    if command.name != "git":
        return
    args, workspace, warn = command.args, command.workspace, command.warn
    directory: str | None = command.cwd
    options, index = _git_options(args)
    work_tree = False
    for option, value in options:
        if option == "-C":
            directory = value if directory is None else _in_directory(value, directory)
        elif option == "--work-tree":
            directory = value
            work_tree = True
    # git -c alias.c='clean -fdx' c: the alias's words stand for its name.
    for alias in _git_aliases(args):
        if alias.given and args[index : index + 1] == [alias.name] and alias.value[:1] != "!":
            args = [*args[:index], *_split(alias.value), *args[index + 1 :]]
            break
    if args[index : index + 1] == ["push"]:
        _check_push(args[index + 1 :], warn)
    if args[index : index + 1] != ["clean"]:
        return
    rest = args[index + 1 :]
    if _has_option(rest, "-n", "--dry-run"):
        return
    what = "git clean"
    git_dir = next((value for option, value in options if option == "--git-dir"), None)
    if git_dir is not None and not work_tree:
        warn(
            f"git clean uses the repository {git_dir}, whose own settings (core.worktree) "
            "may name the tree it deletes from"
        )
    if directory is not None:
        _check_tree(what, directory, workspace, warn)
    for operand in _operands(rest, frozenset({"-e", "--exclude"})):
        _check_tree(what, _in_directory(operand, directory), workspace, warn)


def _check_push(args: list[str], warn: Callable[[str], None]) -> None:
    """git push that can replace or delete what others have on the remote."""
    refspecs = _operands(args, frozenset({"-o", "--push-option", "--repo", "--receive-pack"}))
    forced = _has_option(args, "-f", "--force") or any(r.startswith("+") for r in refspecs[1:])
    if forced:
        warn("git push --force replaces the remote's branch; commits others pushed are lost")
    elif _has_option(args, "--mirror", "-d", "--delete") or any(
        r.startswith(":") for r in refspecs[1:]
    ):
        warn("git push deletes branches on the remote")
