"""Interpreter one-liners: ``python -c``, ``node -e``, ``perl -e``, ``ruby -e``…

The guard does not parse these languages. It recognises, by pattern, library calls that
delete a directory tree (:data:`_CODE_TREE_DELETERS`) and expressions for the home
directory (:data:`_CODE_HOMES`), and works out the path a call is given when it is made of
string literals and the home (``os.path.join(os.environ["HOME"], "..")``). Anything else
risky is warned about, never assumed safe.
"""

from __future__ import annotations

import posixpath
import re

from zcoder.tools.guard.model import _Refused
from zcoder.tools.guard.paths import _dangerous_target

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
    r"|os\.system|subprocess|popen|\bsystem\s*\(?|\bexec[lv]?p?e?\b\s*[(\s\"'\[]|`|child_process"
    r"|execSync|spawn|shell_exec|\bqx\b|os\.execute|os\.remove"
    r"|" + "|".join(_CODE_TREE_DELETERS)
)
# Code that computes what it calls or runs: a name or module taken from a string built at
# run time (getattr, obj[expr](…), send, eval of a string…). No pattern can say what it
# calls, so it is warned about.
_DYNAMIC_CODE = re.compile(
    r"\bgetattr\s*\(|\b__import__\s*\(\s*[^\s'\")]|\bimportlib\b|\b(?:eval|exec|compile)\s*\("
    r"|\b(?:globals|locals|vars)\s*\(\s*\)\s*\[|\]\s*\(|\bFunction\s*\("
    r"|\brequire\s*\(\s*[^\s'\")]|\b(?:public_)?send\s*\(|\b__send__\b|\binstance_eval\b"
    r"|\bconst_get\b|&\s*\{|&\s*\$|->\s*\$|\beval\s+[\"'$q]"
)
# Calls that run a command given as a list of words, in the languages above.
_CODE_RUNNERS = re.compile(
    r"(?:\bsystem|\bexec[lv]?p?e?|\bexecFileSync|\bexecFile|\bspawnSync|\bspawn|\bexecSync"
    r"|subprocess\.(?:run|call|check_call|check_output|Popen)|\bPopen|\bpopen)\b\s*\(?\s*"
)
_CODE_STRINGS = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")


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


def _code_literals(code: str) -> list[str]:
    """The string literals of ``code``, without their quotes."""
    return [
        m.group(1) if m.group(1) is not None else m.group(2) for m in _CODE_STRINGS.finditer(code)
    ]


def _check_code_tree_deletes(name: str, code: str, workspace: str | None) -> None:
    """Refuse a library call in ``code`` that deletes a tree when its argument names a
    catastrophic target (``shutil.rmtree(os.path.expanduser("~"))``)."""
    for match in _CODE_TREE_DELETE.finditer(code):
        argument = _code_argument(code[match.end() :])
        path = _code_path(argument)
        reason = _dangerous_target(path, workspace) if path is not None else None
        if reason is not None:
            raise _Refused(f"{name} code deleting {argument!r} would affect {reason}")


def _code_words(expression: str) -> list[str] | None:
    """The words of a list of literals (``"rm", "-rf", $ENV{HOME}``, ``["rm", "-rf", p]``),
    up to the first that is not a literal nor the home; None when there are none."""
    words: list[str] = []
    for piece in _code_split(expression.strip(), ","):
        if piece.startswith("[") and piece.endswith("]"):
            inner = _code_words(piece[1:-1])
            if inner is None:
                break
            words.extend(inner)
            continue
        word = _code_path(piece)
        if word is None:
            break
        words.append(word)
    return words or None


def _code_commands(code: str) -> list[list[str]]:
    """The commands ``code`` runs from a list of words (perl's ``exec "rm", "-rf", …``,
    ``subprocess.run(["rm", "-rf", …])``, node's ``execFileSync("rm", [...])``)."""
    commands: list[list[str]] = []
    for match in _CODE_RUNNERS.finditer(code):
        rest = code[match.end() :]
        words = _code_words(rest[: _code_end(rest, ";\n")])
        if words is not None and len(words) >= 2:
            commands.append(words)
    return commands
