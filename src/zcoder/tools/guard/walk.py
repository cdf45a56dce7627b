"""The walker: every statement of the syntax tree, down to simple commands.

Pipelines, lists, subshells, groups, loops, ``case`` branches, functions, redirections,
here-documents and assignments (hook variables such as ``PROMPT_COMMAND`` run later and
are checked now). A simple command is expanded, its wrappers stripped, aliases and
functions defined in the line looked into, then handed to its follower
(:data:`.follow._FOLLOWERS`) and to the rules (:mod:`.rules`). :class:`_Walker` is the last
layer of the walker (see :mod:`.words`) and the only one instantiated.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from tree_sitter import Node

from zcoder.tools.guard.follow import _FOLLOWERS, _Follower
from zcoder.tools.guard.model import (
    _MAX_DEPTH,
    _MAX_VALUE,
    _NO_INPUT,
    _UNKNOWN,
    _Call,
    _Refused,
    _Scope,
    _short,
    _Stream,
    _Word,
)
from zcoder.tools.guard.parse import _add_to_word, _error_place, _join_continuations, _text, parse
from zcoder.tools.guard.paths import _GLOB_CHARS, _normalize
from zcoder.tools.guard.words import _ASSIGNMENT, _unescape_dquote
from zcoder.tools.guard.wrappers import (
    _WRAPPER_COMMANDS,
    _command_options,
    _environment_options,
    _strip_words,
    _xargs_options,
    _xargs_words,
)
from zcoder.tools.guard.writes import _check_redirect, _later_warning, _runs_later

_FORK_BOMB = re.compile(
    r"(?<![\w:.\-])([\w:.\-]+)\s*\(\)\s*\{[^}]*?\1\s*\|\s*\1\s*&?[^}]*\}\s*;?\s*\1"
)


_BACKTICKS = re.compile(r"(?<!\\)`((?:[^`\\]|\\.)*)`")


class _Walker(_Follower):
    """The whole walker: one per command line checked."""

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
            _add_to_word(groups, child)
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
        """Check one simple command: its wrappers stripped, then what the line defined
        under its name (an alias, a function), its follower and the rules."""
        texts = [w.text for w in words]
        self.wrapped_lines(texts, scope, depth)
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
        parallel = "parallel" in map(posixpath.basename, stripped)
        if ":::" in [w.text for w in words] and parallel:
            at = [w.text for w in words].index(":::")
            inputs = " ".join(w.text for w in words[at + 1 :] if w.text != ":::")
            words = words[:at]
            stdin = _Stream(inputs + "\n", stdin.decoded)
        if not words:
            if parallel:
                self.shell("sh", [], scope, depth, stdin)  # each input line is a command
            return
        # `command rm` and `builtin` skip functions and aliases of that name.
        bypass = any(posixpath.basename(t) in ("command", "builtin") for t in stripped)
        if xargs:
            if stdin.found is not None and stdin.text is None:
                self.xargs_found(stdin.found, stripped, words, scope, depth)
            words = _xargs_words(words, stdin, replace, delimiter)
        if self.unknown_name(words, scope, depth):
            return
        if self.made_in_line(words, scope, depth, stdin):
            return
        name = posixpath.basename(words[0].text)
        args = words[1:]
        if not bypass and self.defined(name, words, scope, depth, stdin):
            return
        if re.fullmatch(r"python3\.[0-9]+|pypy3\.[0-9]+", name):
            name = "python3"
        options = _environment_options(name, inner.variables)
        if options:  # GIT_WORK_TREE=~ git clean: as git --work-tree=~ clean
            words = [words[0], *(_Word(o) for o in options), *args]
            args = words[1:]
        for value in _command_options(name, [w.text for w in args]):
            self.script(value, name, scope.child(None), depth)
        follower = _FOLLOWERS.get(name)
        if follower is not None and follower(self, _Call(name, args, scope, inner, depth, stdin)):
            return
        if xargs and stdin.found is None and any(not w.known for w in args):
            self.xargs_unknown(name, [w.text for w in words[1:]])
        self.catastrophes([w.text for w in words], scope, depth)
        if name == "ln":
            self.link(args)
        self.copies(name, [w.text for w in args])
        self.mount(name, [w.text for w in args])

    def made_in_line(self, words: list[_Word], scope: _Scope, depth: int, stdin: _Stream) -> bool:
        """Run a program the line made: a script it wrote (``./x.sh``), checked by its
        text, or a copy or link of a program (``cp /bin/rm /tmp/r; /tmp/r -rf ~``), checked
        as that program; whether it was one."""
        path = words[0].text
        if "/" not in path:
            return False  # found on PATH, not the file the line made
        content = scope.files.get(_normalize(path))
        if content is None:
            content = scope.files.get(self.place(path))
        if content is not None:
            self.run_file(path, content, words[1:], scope, depth)
            return True
        program = self.program(path)
        if program is None or program == posixpath.basename(path):
            return False
        try:
            self.simple([_Word(program), *words[1:]], scope, depth, stdin)
        except _Refused as refused:
            raise _Refused(f"{refused.reason} ({path} is {program}, copied or linked)") from None
        return True

    def wrapped_lines(self, texts: list[str], scope: _Scope, depth: int) -> None:
        """env -S, flock -c…: a whole command line in one argument of a wrapper."""
        for position, text in enumerate(texts[:-1]):
            options = _WRAPPER_COMMANDS.get(posixpath.basename(text), ())
            for index in range(position + 1, len(texts) - 1) if options else ():
                if texts[index] in options:
                    self.line(texts[index + 1], scope.child(None), depth + 1)

    def unknown_name(self, words: list[_Word], scope: _Scope, depth: int) -> bool:
        """Whether the command name is not known (``$CMD``, ``$(…)``): the command is then
        checked here as far as it can be. A name that is a pattern is warned about."""
        head = words[0]
        if not head.known and head.text.startswith(("(", "{")):
            return True  # a subshell or group after `time`/`!`: walked as statements already
        if not head.known:
            self.warn(
                f"the command name {_short(head.text)} comes from "
                + ("a decoder" if head.decoded else "something the guard cannot see")
                + "; check what it is before approving"
            )
            if head.decoded:
                raise _Refused(f"the command name {_short(head.text)} is decoded at run time")
            self.catastrophes([w.text for w in words], scope, depth)
            return True
        if _GLOB_CHARS.search(head.text):
            self.warn(
                f"the command name {_short(head.text)} is a pattern; the guard cannot tell "
                "which program it runs"
            )
        return False

    def defined(
        self, name: str, words: list[_Word], scope: _Scope, depth: int, stdin: _Stream
    ) -> bool:
        """Run an alias or a function the line defined under ``name``, as the shell would;
        whether there was one. A function calling itself through a pipeline is a fork bomb."""
        head, args = words[0], words[1:]
        if name in scope.aliases and name not in self.calling:
            rest = " ".join(shlex.quote(w.text) if w.known else w.text for w in args)
            self.calling.add(name)
            try:
                self.line(f"{scope.aliases[name]} {rest}", scope, depth + 1, stdin)
            finally:
                self.calling.discard(name)
            return True
        if name in scope.functions and name in self.calling:
            # Recursion: with a pipeline or `&` anywhere in the cycle, it multiplies.
            cycle = [_text(scope.functions[f]) for f in self.calling if f in scope.functions]
            if any("|" in body or "&" in body for body in cycle):
                raise _Refused(
                    f"the function {name} calls itself through a pipeline or in the "
                    "background: a fork bomb"
                )
        if name in scope.functions and name not in self.calling:
            self.calling.add(name)
            try:
                self.statement(scope.functions[name], scope.child([head, *args]), depth + 1, stdin)
            finally:
                self.calling.discard(name)
            return True
        return False
