"""The walker's layer for code in other languages: interpreter one-liners (``python -c``,
``node -e``, ``perl -e``, ``ruby -e``…) and awk programs.

The languages are not parsed: :mod:`.code` finds, by pattern, library calls that delete a
tree, commands run from a list of literal words (``exec "rm", "-rf", $ENV{HOME}``), and
code that computes what it calls (``getattr(m, 'rm' + 'tree')``, ``fs['rm' + 'Sync']``),
which is warned about since no pattern can say what it calls. A command found in the code
is checked as a command line of its own.
"""

from __future__ import annotations

import posixpath
import re

from zcoder.tools.guard.code import (
    _DYNAMIC_CODE,
    _INTERPRETERS,
    _RISKY_CODE,
    _check_code_tree_deletes,
    _code_commands,
    _code_literals,
)
from zcoder.tools.guard.model import _Call, _Refused, _Scope
from zcoder.tools.guard.options import _operands_after_options
from zcoder.tools.guard.paths import _dangerous_target, _is_device, _normalize, _shell_join
from zcoder.tools.guard.scripts import _SHELLS, _Scripts


class _Interpreters(_Scripts):
    """The walker's layer that reads code in other languages for commands it runs."""

    def follow_interpreter(self, call: _Call) -> bool:
        """``python -c``, ``perl -e``…: look for commands and deletions in the code."""
        name, args, scope, depth, stdin = call.name, call.args, call.scope, call.depth, call.stdin
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
            if not text.startswith("-") and _normalize(text) in scope.files:
                code, from_stdin = scope.files[_normalize(text)], False  # written in the line
                break
            if not text.startswith("-") or text == "-m":
                return True  # a script file or a module
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
            return True
        literals = _code_literals(code)
        for literal in literals:
            if _is_device(literal):
                self.warn(f"the {name} code names the device {literal}; read it before approving")
        _check_code_tree_deletes(name, code, self.workspace)
        if _DYNAMIC_CODE.search(code):
            self.warn(
                f"the {name} code computes what it calls (getattr, a name built from strings, "
                "eval…); read it before approving"
            )
        if not _RISKY_CODE.search(code):
            return True
        for words in _code_commands(code):
            # exec "rm", "-rf", $ENV{HOME}: the words as a command line ("~" unquoted).
            self.code_line(_shell_join(words), name, scope, depth)
        for literal in literals:
            if " " in literal:
                self.code_line(literal, name, scope, depth)
            elif posixpath.isabs(literal) or literal.startswith("~"):
                reason = _dangerous_target(literal, self.workspace)
                if reason is not None and re.search(r"rmtree|rmdir|remove", code):
                    raise _Refused(f"{name} code deleting {literal!r} would affect {reason}")
        self.warn(f"the {name} code deletes files or runs commands; read it before approving")
        return True

    def code_line(self, line: str, name: str, scope: _Scope, depth: int) -> None:
        """Check a command line found in ``name``'s code; text that is no command line
        (it cannot be parsed) is left to the warning about the code."""
        try:
            self.line(line, scope.child(None), depth + 1)
        except _Refused as refused:
            if "parsed" not in refused.reason:
                raise _Refused(f"{refused.reason} (run by the {name} code)") from None

    def follow_awk(self, call: _Call) -> bool:
        """awk programs run commands with system("…") and print | "…"."""
        args, scope, depth = call.args, call.scope, call.depth
        takes = {"-f", "-v", "-F", "--file", "--assign", "--field-separator"}
        operands = _operands_after_options(args, takes)
        if not operands or any(w.text in ("-f", "--file") for w in args):
            return False
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
        return False
