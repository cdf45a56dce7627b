"""Followers: the commands that run another command later or elsewhere, and how the guard
finds that command (:data:`_FOLLOWERS`, a table from command name to follower).

``eval``, ``sh -c``, a script fed to a shell on stdin, ``source``, ``trap``, ``crontab``,
``tmux``, ``ssh``, ``watch``, ``at``, ``find -exec``, ``docker run``, awk's ``system()``
and interpreter one-liners (their followers are in :mod:`.interpreters`) all hide a
command inside an argument, a file or a stream. What runs later is
checked as if it ran now; what cannot be read is warned about, and what comes out of a
decoder is refused. To follow a new command, write a ``follow_*`` method and add its name to
the table; commands that only change what the line has defined (``set``, ``read``,
``alias``, ``cd``) are in the same table, since they too are told apart by name.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from zcoder.tools.guard.code import _INTERPRETERS
from zcoder.tools.guard.containers import CONTAINER_RUNNERS, _container_run, _in_host
from zcoder.tools.guard.deleters import _DELETERS, _deleted
from zcoder.tools.guard.evaluate import _printf
from zcoder.tools.guard.find import (
    _FIND_DELETERS,
    _find_deletes_unfiltered,
    _find_items,
    _find_parts,
)
from zcoder.tools.guard.git import _git_aliases, _git_commands_set, _git_runs_unasked
from zcoder.tools.guard.interpreters import _Interpreters
from zcoder.tools.guard.model import _NO_INPUT, _UNKNOWN, _Call, _Refused, _Scope, _Word
from zcoder.tools.guard.options import _has_option, _operands, _operands_after_options
from zcoder.tools.guard.paths import (
    _WORKSPACE_ITSELF,
    _dangerous_target,
    _in_directory,
    _normalize,
    _relative,
    _shell_join,
)
from zcoder.tools.guard.rules import _check_simple
from zcoder.tools.guard.scripts import _SHELLS
from zcoder.tools.guard.wrappers import _XARGS_LIKE
from zcoder.tools.guard.writes import _cron_commands, _written_files

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


class _Follower(_Interpreters):
    """The walker's layer that follows commands run later or elsewhere."""

    def follow_trap(self, call: _Call) -> bool:
        """``trap ACTION SIGNAL…`` runs ACTION later, on the signal or at exit."""
        args, scope, depth = call.args, call.scope, call.depth
        operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if "--" in [w.text for w in args]:
            operands = args[[w.text for w in args].index("--") + 1 :]
        if not operands or operands[0].text == "-" or operands[0].text.isdigit():
            return True
        action = operands[0]
        if action.known:
            self.later(action.text, "trap", scope, depth)
        else:
            self.run_script(action, "trap", scope.child(None), depth)
        return True

    def follow_crontab(self, call: _Call) -> bool:
        """``crontab -`` or ``crontab FILE`` installs a table whose commands cron runs."""
        args, scope, depth, stdin = call.args, call.scope, call.depth, call.stdin
        texts = [w.text for w in args]
        if "-r" in texts:
            self.warn("crontab -r deletes the whole crontab, with no question and no copy")
        if any(t in ("-l", "-r", "-e", "-T", "-V") for t in texts):
            return True
        operands = _operands(texts, frozenset({"-u", "-c"}))
        if not operands or operands == ["-"]:
            text, source = stdin.text, stdin
        else:
            text, source = scope.files.get(_normalize(operands[0])), _UNKNOWN
        if text is None and source.decoded:
            raise _Refused("crontab would install a table out of a decoder the guard cannot see")
        if text is None and source.downloaded:
            self.warn("crontab installs a table from a download the guard cannot read")
        # (crontab -l; echo '…') | crontab -: the lines added are known, the old ones not.
        for command in _cron_commands(text if text is not None else source.partial or "", False):
            self.later(command, "crontab", scope, depth)
        return True

    def follow_tmux(self, call: _Call) -> bool:
        """tmux runs a shell command given to new-session, run-shell, send-keys…"""
        args, scope, depth = call.args, call.scope, call.depth
        texts = [w.text for w in args]
        index = 0
        while index < len(texts) and texts[index].startswith("-"):
            if texts[index] == "-c" and index + 1 < len(texts):
                self.later(texts[index + 1], "tmux -c", scope, depth)
            index += 2 if texts[index] in ("-L", "-S", "-f", "-c") else 1
        if index >= len(texts) or texts[index] not in _TMUX_RUNNERS:
            return True
        command = _operands(texts[index + 1 :], _TMUX_TAKES)
        keys = ("Enter", "C-m", "KPEnter", "C-j")
        command = [c for c in command if c not in keys]
        if command:
            self.later(" ".join(command), f"tmux {texts[index]}", scope, depth)
        return True

    def follow_read(self, call: _Call) -> bool:
        """``read`` assigns what it reads: known when stdin is."""
        args, scope, stdin, depth = call.args, call.scope, call.stdin, call.depth
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
        return True

    def follow_ssh(self, call: _Call) -> bool:
        args, scope, depth = call.args, call.scope, call.depth
        takes = {"-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-E", "-m"}
        index = 0
        while index < len(args) and args[index].text.startswith("-"):
            index += 2 if args[index].text in takes else 1
        remote = args[index + 1 :]
        if remote:
            self.line(" ".join(w.text for w in remote), scope.child(None), depth + 1)
        return True

    def follow_find(self, call: _Call) -> bool:
        """``find -delete`` and ``-exec``: refused on a catastrophic start when an action can
        act before any test has selected a file."""
        args, scope, depth = call.args, call.scope, call.depth
        follow, _, given, expression = _find_parts([w.text for w in args])
        starts = [self.through_links(t.rstrip("/") + "/" if follow else t) for t in given]
        if not starts:
            starts = ["."]
        items = _find_items(expression, lambda command: self.find_exec(command, scope, depth))
        deletes = "delete" in items
        if not deletes:
            return True
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
        return True

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

    def xargs_found(
        self,
        found: tuple[str, ...],
        stripped: list[str],
        words: list[_Word],
        scope: _Scope,
        depth: int,
    ) -> None:
        """xargs (or parallel) running ``words`` on what ``find FOUND`` prints: checked as
        ``find FOUND ( EXPRESSION ) -exec WORDS {} +`` would be."""
        _, options, starts, expression = _find_parts(list(found))
        if expression:
            expression = ["(", *expression, ")"]
        command = [*options, *starts, *expression, "-exec", *(w.text for w in words), "{}", "+"]
        runner = next(
            (posixpath.basename(t) for t in stripped if posixpath.basename(t) in _XARGS_LIKE),
            "xargs",
        )
        try:
            self.follow_find(
                _Call("find", [_Word(t) for t in command], scope, scope, depth, _NO_INPUT)
            )
        except _Refused as refused:
            raise _Refused(
                f"{refused.reason} ({runner} {words[0].text} is given what find prints)"
            ) from None

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

    # The followers of _FOLLOWERS. Each returns True when it has checked the command
    # entirely, False when the command still goes through the rules.

    def follow_set(self, call: _Call) -> bool:
        """``set -- a b`` sets the positional parameters later words use."""
        args = call.args
        if not args or all(w.text.startswith(("-", "+")) for w in args):
            return False
        operands = args[1:] if args[0].text == "--" else args
        while operands and operands[0].text.startswith(("-", "+")):
            operands = operands[1:]
        call.scope.positional = [_Word("sh"), *operands]
        return True

    def follow_printf(self, call: _Call) -> bool:
        """``printf -v NAME FORMAT…`` assigns what it would print."""
        args = call.args
        if len(args) < 3 or args[0].text != "-v":
            return False
        printed = _printf([w.text for w in args[2:]]) if all(w.known for w in args) else None
        call.scope.variables[args[1].text] = (
            _Word(printed) if printed is not None else _Word(args[1].text, known=False)
        )
        self.hook(args[1].text, call.scope.variables[args[1].text], call.scope, call.depth)
        return True

    def follow_alias(self, call: _Call) -> bool:
        """``alias NAME=VALUE``: the value is checked now, and again where NAME is used."""
        for arg in call.args:
            if "=" in arg.text and arg.known:
                alias, value = arg.text.split("=", 1)
                call.scope.aliases[alias] = value
                self.line(value, call.scope.child(None), call.depth + 1)
        return True

    def follow_cd(self, call: _Call) -> bool:
        self.change_directory(call.args)
        return True

    def follow_shell(self, call: _Call) -> bool:
        """``sh -c``, ``bash script``, ``su -c``, or a shell reading its script on stdin."""
        self.shell(call.name, call.args, call.inner, call.depth, call.stdin)
        return True

    def follow_eval(self, call: _Call) -> bool:
        args = call.args
        joined = _Word(
            " ".join(w.text for w in args),
            known=all(w.known for w in args),
            decoded=any(w.decoded for w in args),
        )
        self.run_script(joined, "eval", call.inner, call.depth)
        return True

    def follow_source(self, call: _Call) -> bool:
        """``source FILE`` and ``. FILE``: a file written earlier in the line is checked."""
        if call.args:
            self.script_file(call.args[0], call.scope, call.depth, call.name, call.stdin)
        return True

    def follow_at(self, call: _Call) -> bool:
        """``at`` and ``batch`` run the script they read on stdin, later."""
        if any(w.text in ("-f", "-l", "-r", "-d") for w in call.args):
            return False
        self.shell("sh", [], call.scope, call.depth, call.stdin)
        return True

    def follow_watch(self, call: _Call) -> bool:
        """``watch CMD…`` runs its operands as a command line, again and again."""
        command = _operands_after_options(call.args, {"-n", "--interval", "-d", "-x"})
        if command:
            self.line(" ".join(w.text for w in command), call.scope.child(None), call.depth + 1)
        return True

    def follow_git(self, call: _Call) -> bool:
        """A git alias runs ``git VALUE``, or a shell command when its value starts with "!":
        given with -c, the shell command is checked now (the rules expand the other kind);
        set with ``git config``, either kind runs later."""
        for alias in _git_aliases([w.text for w in call.args]):
            shell = alias.value[:1] == "!"
            where = f"git alias.{alias.name}"
            if alias.given and shell:
                self.script(alias.value[1:], where, call.scope.child(None), call.depth)
            elif not alias.given:
                command = alias.value[1:] if shell else f"git {alias.value}"
                self.later(command, where, call.scope, call.depth)
        for setting in _git_commands_set([w.text for w in call.args]):
            where = f"git {setting.key}"
            if setting.key != "core.hookspath":
                self.later(setting.value.lstrip("!"), where, call.scope, call.depth)
            if _git_runs_unasked(setting):
                self.warn(
                    f"git config sets {setting.key}: from now on git runs what it names "
                    "without asking; check it before approving"
                )
        return False

    def follow_container(self, call: _Call) -> bool:
        """``docker run -v SOURCE:TARGET IMAGE COMMAND``: the command is checked with each
        writable volume's target read as its source on the host; a volume of /, a home or a
        system tree that the container may change is warned about."""
        run = _container_run([w.text for w in call.args])
        if run is None:
            return False
        for volume in run.volumes:
            reason = _dangerous_target(volume.source, self.workspace)
            if volume.writable and reason is not None and reason not in _WORKSPACE_ITSELF:
                self.warn(
                    f"{call.name} gives the container {volume.source} ({reason}) to change "
                    f"at {volume.target}"
                )
        line = _shell_join(run.command)
        host = _in_host(line, run.volumes)
        if host != line:
            try:
                self.line(host, call.scope.child(None), call.depth + 1)
            except _Refused as refused:
                raise _Refused(
                    f"{refused.reason} (run in the container, on a volume of the host)"
                ) from None
        return False

    def follow_tee(self, call: _Call) -> bool:
        """tee writes its stdin into files: into a start-up file, that text runs later; a
        script run later in the line is read from what tee wrote."""
        for target in _written_files("tee", [w.text for w in call.args]):
            if call.stdin.text is not None:
                self.runs_later(target, call.stdin.text, call.scope, call.depth)
                call.scope.files[_normalize(target)] = call.stdin.text  # read later in the line
            else:
                call.scope.files.pop(_normalize(target), None)
        return False


_Follow = Callable[[_Follower, _Call], bool]

# Command name -> its follower. A command not named here goes straight to the rules;
# one whose follower returns False goes to them afterwards.
_FOLLOWERS: dict[str, _Follow] = {
    # What the line defines, which later words use.
    "set": _Follower.follow_set,
    "read": _Follower.follow_read,
    "printf": _Follower.follow_printf,
    "alias": _Follower.follow_alias,
    "cd": _Follower.follow_cd,
    "pushd": _Follower.follow_cd,
    # A script in an argument, a file or stdin.
    **dict.fromkeys(sorted(_SHELLS | {"su", "runuser"}), _Follower.follow_shell),
    "eval": _Follower.follow_eval,
    "source": _Follower.follow_source,
    ".": _Follower.follow_source,
    **dict.fromkeys(_INTERPRETERS, _Interpreters.follow_interpreter),
    # Later, or elsewhere.
    "at": _Follower.follow_at,
    "batch": _Follower.follow_at,
    "watch": _Follower.follow_watch,
    "trap": _Follower.follow_trap,
    "crontab": _Follower.follow_crontab,
    "tmux": _Follower.follow_tmux,
    "ssh": _Follower.follow_ssh,
    # A command inside another's expression, program or output.
    "find": _Follower.follow_find,
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk", "busybox-awk"), _Interpreters.follow_awk),
    "tee": _Follower.follow_tee,
    **dict.fromkeys(sorted(CONTAINER_RUNNERS), _Follower.follow_container),
    "git": _Follower.follow_git,
}
