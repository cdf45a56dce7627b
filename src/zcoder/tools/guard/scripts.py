"""Scripts run by a shell, ``eval``, ``source``, a hook variable or a start-up file: the
layer of the walker that reads them and checks them as if they ran now.

Whatever the route (an argument of ``sh -c``, a file written earlier in the line, a
here-document on stdin, ``PROMPT_COMMAND``, a line written into ``~/.bashrc``), a script
ends up as text checked line by line, and a refusal says which script it was. A script
that cannot be read is warned about, and one that comes out of a decoder is refused: it
is the usual shape of an obfuscated payload.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from zcoder.tools.guard.code import _INTERPRETERS
from zcoder.tools.guard.model import _NO_INPUT, _Refused, _Scope, _short, _Stream, _Word
from zcoder.tools.guard.paths import _normalize
from zcoder.tools.guard.places import _Places
from zcoder.tools.guard.writes import _cron_commands, _desktop_commands, _runs_later

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})

_PROMPT_END = "ZCODER_PROMPT_END"

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

_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


class _Scripts(_Places):
    """The walker's layer that checks scripts run now or later."""

    def hook(self, key: str, value: _Word, scope: _Scope, depth: int) -> None:
        """Check what a variable the shell runs later (PROMPT_COMMAND, PS1, BASH_ENV…) is
        set to, as if it ran now."""
        kind = _HOOK_VARIABLES.get(key)
        if kind is None or self.silent:
            return
        if value.decoded:
            raise _Refused(f"{key} is set to text out of a decoder the guard cannot see")
        text = value.text
        if value.script is not None and kind in ("file", "command"):
            # BASH_ENV=<(…), PROMPT_COMMAND=<(…): the file's text is what runs.
            self.run_stream(value.script, key, scope, depth)
            return
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

    def runs_later(self, target: str, text: str, scope: _Scope, depth: int) -> None:
        """``text`` is written to ``target``: check it when a shell or cron runs it later."""
        kind = _runs_later(target)
        if kind == "script":
            self.later(text, target, scope, depth)
        elif kind == "program":
            self.run_file(target, text, [], scope, depth)
        elif kind == "autostart":
            for command in _desktop_commands(text):
                self.later(command, target, scope, depth)
        elif kind == "crontab":
            system = not _normalize(target).startswith("/var/spool/cron/")
            for command in _cron_commands(text, system):
                self.later(command, target, scope, depth)

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
                if arg in ("--rcfile", "--init-file") and index < len(args):
                    # Read and run before an interactive shell's first prompt.
                    self.script_file(args[index], scope, depth, f"{name} {arg}")
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
            visible = _Word(stdin.partial or "", False, stdin.decoded)
            self.run_script(visible, name, scope, depth, stdin)

    def run_stream(self, stream: _Stream, runner: str, scope: _Scope, depth: int) -> None:
        """Check the script a shell reads from ``stream`` (a ``<(...)`` file, a pipe)."""
        if stream.text is not None:
            self.script(stream.text, runner, scope.child(None), depth)
        else:
            visible = _Word(stream.partial or "", False, stream.decoded)
            self.run_script(visible, runner, scope, depth, stream)

    def run_file(
        self, path: str, content: str, args: list[_Word], scope: _Scope, depth: int
    ) -> None:
        """A file written earlier in the line, run as a program (``./x.sh``): checked as
        the interpreter its first line names would run it, a shell when it names none."""
        first = content.split("\n", 1)[0]
        words = first[2:].split() if first.startswith("#!") else []
        if words and posixpath.basename(words[0]) == "env":
            words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        runner = posixpath.basename(words[0]) if words else "sh"
        runner = "python3" if re.fullmatch(r"python3\.[0-9]+", runner) else runner
        if runner in _SHELLS:
            self.script(content, path, scope.child([_Word(path), *args]), depth)
        elif runner in _INTERPRETERS:
            code = content.split("\n", 1)[1] if "\n" in content else ""
            try:
                self.line(shlex.join([runner, _INTERPRETERS[runner], code]), scope, depth + 1)
            except _Refused as refused:
                raise _Refused(f"{refused.reason} (in {path}, which {runner} runs)") from None
        else:
            self.warn(f"{path} is run by {runner}, whose language the guard does not read")

    def script_file(
        self, word: _Word, scope: _Scope, depth: int, runner: str, stdin: _Stream = _NO_INPUT
    ) -> None:
        if word.script is not None:
            self.run_stream(word.script, runner, scope, depth)
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
