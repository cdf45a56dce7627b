"""Which command lines change nothing: the only ones plan mode runs (zcoder.tools.modes).

The opposite of the guard's question, so the opposite stance: the guard refuses what it
knows is catastrophic, this allows only what it knows is harmless. A line is read-only when
every command in it is a program of :data:`_PROGRAMS` (by its bare name, never a path) whose
arguments pass that program's check, joined by pipes, ``;``, ``&&`` and ``||``, every word
a literal (no variable, substitution or glob-built name: ``$X`` could hold ``-delete``),
and output redirected only to /dev/null or another descriptor. Anything else (``cat > x``,
``sed -i``, ``tee``, ``git config``, a here-document, a subshell, a background job, a
line tree-sitter-bash cannot parse) is not. It prefers a false refusal: the model can
plan without that command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tree_sitter import Node

from zcoder.tools.guard.parse import _join_continuations, _text, parse

__all__ = ["read_only_refusal"]

_STRUCTURE = frozenset({"program", "list", "pipeline", "redirected_statement", "comment"})
_SEPARATORS = frozenset({";", ";;", "&&", "||", "|", "|&", "\n"})
_LITERALS = frozenset({"word", "number", "raw_string", "string", "concatenation"})


def _value(node: Node) -> str | None:
    """A literal word's value as the shell passes it; None when it is not a literal."""
    if node.type in ("word", "number"):
        text = _text(node)
        if any(char in text for char in "$`*?[{"):
            return None
        return text.replace("\\", "")
    if node.type == "raw_string":
        return _text(node)[1:-1]
    if node.type == "string":
        parts = [child for child in node.children if child.type not in ('"',)]
        if any(child.type != "string_content" for child in parts):
            return None
        return "".join(_text(child) for child in parts).replace("\\", "")
    if node.type == "concatenation":
        values = [_value(child) for child in node.children]
        if any(value is None for value in values):
            return None
        return "".join(value for value in values if value is not None)
    return None


def _has_option(args: Sequence[str], short: str, long: Sequence[str]) -> bool:
    """Whether ``args`` give one of these options: a short letter anywhere in a cluster
    (``-uo``), a long name or any abbreviation of it (GNU accepts ``--out`` for
    ``--output``), with or without ``=value``."""
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            if name and any(option.startswith(name) for option in long):
                return True
        elif arg.startswith("-") and any(letter in arg[1:] for letter in short):
            return True
    return False


def _positionals(args: Sequence[str]) -> list[str]:
    return [arg for arg in args if not arg.startswith("-") or arg == "-"]


def _any(_args: Sequence[str]) -> str | None:
    return None


def _refusing(short: str, *long: str) -> Callable[[Sequence[str]], str | None]:
    def check(args: Sequence[str]) -> str | None:
        return "an option that writes or runs something" if _has_option(args, short, long) else None

    return check


def _find(args: Sequence[str]) -> str | None:
    actions = {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0"}
    actions |= {"-fprintf", "-fls"}
    hit = next((arg for arg in args if arg in actions), None)
    return f"find {hit} changes or runs something" if hit else None


def _date(args: Sequence[str]) -> str | None:
    if _has_option(args, "s", ["set"]) or any(not a.startswith("+") for a in _positionals(args)):
        return "date can set the clock"
    return None


def _uniq(args: Sequence[str]) -> str | None:
    return "uniq with an output file writes it" if len(_positionals(args)) > 1 else None


def _bare(args: Sequence[str]) -> str | None:
    return "only without arguments" if args else None


_GIT_READERS = frozenset(
    {"status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "rev-parse", "grep"}
    | {"shortlog", "describe", "cat-file", "rev-list", "whatchanged"}
)
_GIT_BRANCH_LISTING = frozenset(
    {"-a", "-r", "-v", "-vv", "-l", "--list", "--all", "--remotes", "--verbose"}
    | {"--show-current", "--no-color"}
)


def _git(args: Sequence[str]) -> str | None:
    rest = list(args)
    while rest and rest[0] in ("--no-pager", "-P"):
        rest.pop(0)
    if not rest:
        return None
    sub, options = rest[0], rest[1:]
    if sub == "branch":
        if all(option in _GIT_BRANCH_LISTING for option in options):
            return None
        return "git branch with these arguments may change branches"
    if sub not in _GIT_READERS:
        return f"git {sub} is not known to be read-only"
    if _has_option(options, "O", ["output", "open-files-in-pager"]):
        return f"git {sub} with an option that writes a file or runs a pager"
    return None


_ANY_ARGUMENTS = (
    "cat",
    "head",
    "tail",
    "ls",
    "pwd",
    "echo",
    "printf",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "stat",
    "du",
    "df",
    "diff",
    "cmp",
    "cut",
    "tr",
    "nl",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "which",
    "whoami",
    "id",
    "uname",
    "true",
    "false",
    "test",
    "[",
    "od",
    "hexdump",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cksum",
    "ps",
    "pgrep",
    "jq",
    "column",
    "fold",
    "rev",
    "tac",
    "comm",
    "join",
    "paste",
    "seq",
    "nproc",
    "printenv",
    "cd",
)
"""Programs that only read or print, whatever their arguments."""

_PROGRAMS: dict[str, Callable[[Sequence[str]], str | None]] = {
    **dict.fromkeys(_ANY_ARGUMENTS, _any),
    "sort": _refusing("o", "output", "compress-program"),
    "tree": _refusing("oR", "output"),  # -R: each level's listing written to 00Tree.html
    "rg": _refusing("", "pre", "hostname-bin"),  # both name a program rg runs
    "file": _refusing("C", "compile"),
    "find": _find,
    "date": _date,
    "uniq": _uniq,
    "uptime": _bare,
    "git": _git,
}


def _redirect(node: Node) -> str | None:
    """Why a redirection may write; None for input, /dev/null and descriptor copies."""
    if node.type != "file_redirect":
        return "a here-document or here-string"
    operator = next((c.type for c in node.children if not c.is_named), "")
    target = node.named_children[-1] if node.named_children else None
    if target is None:
        return "a redirection without a target"
    if operator == "<":
        return None if _value(target) is not None else "an input that is not a literal file"
    if operator in (">&", "<&") and target.type == "number":
        return None
    if operator in (">", ">>", "&>", "&>>", ">|") and _value(target) == "/dev/null":
        return None
    return f"output redirected to {_text(target)}"


def _command(node: Node) -> str | None:
    name_node = node.child_by_field_name("name")
    words: list[str] = []
    for child in node.named_children:
        target = child.named_children[0] if child.type == "command_name" else child
        if child.type == "command_name" and not child.named_children:
            return "a command without a name"
        value = _value(target) if target.type in _LITERALS else None
        if value is None:
            return f"{_text(child)!r} is not a literal word"
        words.append(value)
    if name_node is None or not words:
        return "a command without a name"
    program, args = words[0], words[1:]
    check = _PROGRAMS.get(program) if "/" not in program else None
    if check is None:
        return f"{program} is not known to be read-only"
    why = check(args)
    return f"{program}: {why}" if why else None


def _walk(node: Node) -> str | None:
    if node.type == "command":
        return _command(node)
    if node.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
        return _redirect(node)
    if node.type not in _STRUCTURE:
        return f"{node.type.replace('_', ' ')} ({_text(node)[:40]!r})"
    for child in node.children:
        if not child.is_named:
            if child.type not in _SEPARATORS:
                return f"the operator {child.type!r}"
            continue
        why = _walk(child)
        if why is not None:
            return why
    return None


def read_only_refusal(command: str) -> str | None:
    """None when ``command`` is known to change nothing; else the first reason it may."""
    if not command.strip():
        return "an empty command"
    root = parse(_join_continuations(command))
    if root.has_error:
        return "the command could not be parsed"
    try:
        return _walk(root)
    except RecursionError:
        return "the command is nested too deeply"
