"""Word expansion as the shell does it, and the layer of the walker that does it.

A command name or a path is only known after quoting (``r''m``, ``"rm"``, ``\\rm``), ANSI-C
strings (``$'\\x72\\x6d'``), variables set earlier in the line (``IFS`` included), field
splitting and brace expansion. :class:`_Expander` is the first layer of the walker: it
holds the walker's state and expands words; a command substitution in a word is walked
too, through :meth:`_Expander.statements`, which the walker's last layer (:mod:`.walk`)
supplies. The walker is built in layers so that each module says one thing:
:mod:`.words` (expansion) -> :mod:`.evaluate` (what a command prints) -> :mod:`.places`
(where paths lead) -> :mod:`.scripts` (scripts run now or later) -> :mod:`.interpreters`
(code in other languages) -> :mod:`.follow` (commands that run another command) ->
:mod:`.walk` (the syntax tree).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

from tree_sitter import Node

from zcoder.tools.guard.model import (
    _MAX_DEPTH,
    _MAX_FIELDS,
    _NO_INPUT,
    _Refused,
    _Scope,
    _Segment,
    _Stream,
    _Word,
)
from zcoder.tools.guard.parse import _text

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_BRACES = re.compile(r"\{([^{}]*)\}")
_DEFAULT_IFS = " \t\n"


_VARIABLE_NODES = frozenset({"variable_name", "special_variable_name"})
_VARIABLE_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")


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


class _Expander(ABC):
    """The walker's state, and word expansion; the layers above add the rest."""

    def __init__(self, workspace: str | None) -> None:
        self.workspace = workspace
        self.warnings: list[str] = []
        self.silent = 0
        """Above 0 while words are expanded only to learn their values."""
        self.calling: set[str] = set()
        """Functions and aliases being expanded (a recursive one is looked into once)."""
        self.links: dict[str, str] = {}
        """Symbolic links made earlier in the line: the link's path -> where it points."""
        self.mounts: dict[str, str] = {}
        """Bind mounts made earlier in the line: the mount point -> the directory shown."""
        self.programs: dict[str, str] = {}
        """Copies and links of files made earlier in the line: the copy's path -> the name
        of the file it was made from (``cp /bin/rm /tmp/r`` makes /tmp/r an rm)."""
        self.cwds: list[str] = []
        """Directories ``cd`` went to earlier in the line (relative paths are checked from
        each, and from the workspace, since a ``cd`` may fail or run in a subshell)."""

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    @abstractmethod
    def line(self, text: str, scope: _Scope, depth: int, stdin: _Stream = _NO_INPUT) -> None:
        """Check a whole command line (supplied by :mod:`.walk`)."""

    @abstractmethod
    def statements(
        self, nodes: list[Node], scope: _Scope, depth: int, stdin: _Stream = _NO_INPUT
    ) -> None:
        """Check statements, as in a command substitution (supplied by :mod:`.walk`)."""

    @abstractmethod
    def statement(self, node: Node, scope: _Scope, depth: int, stdin: _Stream = _NO_INPUT) -> None:
        """Check one statement (supplied by :mod:`.walk`)."""

    @abstractmethod
    def substitution_output(self, node: Node, scope: _Scope) -> _Stream:
        """What a command substitution prints (supplied by :mod:`.evaluate`)."""

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
