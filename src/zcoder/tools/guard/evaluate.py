"""What a command prints, worked out from literals.

Obfuscation usually builds the dangerous text at run time: ``$(echo cm0gLXJmIH4= | base64
-d)``, ``$(printf '\\x72\\x6d')``, ``$(rev <<< 'fr- mr')``. Where the input is a literal
the guard computes the output itself (echo, printf, base64/base32 -d, openssl base64 -d,
xxd -r -p, rev, tr, cat) and checks the command that text makes. Where it cannot, the
output of a decoder stays marked as decoded, so what comes out of it into a shell is
refused rather than merely warned about.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re

from tree_sitter import Node

from zcoder.tools.guard.model import _UNKNOWN, _Scope, _Stream, _Word
from zcoder.tools.guard.parse import _add_to_word, _text
from zcoder.tools.guard.paths import _normalize
from zcoder.tools.guard.words import _ansi_c, _Expander
from zcoder.tools.guard.wrappers import _strip_words

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
    if name == "which" and len(operands) == 1 and "/" not in operands[0]:
        return f"/usr/bin/{operands[0]}\n"  # where it is matters less than what it is
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


class _Printer(_Expander):
    """The walker's layer that works out what a command prints."""

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
        if kind in ("subshell", "compound_statement", "list"):
            # (a; b), { a; b; }, a && b: what each prints, one after the other.
            parts = [
                self.output(child, scope, stdin)
                for child in node.named_children
                if child.type != "comment"
            ]
            if parts and all(p.text is not None for p in parts):
                return _Stream("".join(p.text or "" for p in parts))
            visible = "".join((p.text if p.text is not None else p.partial) or "" for p in parts)
            return _Stream(
                None,
                decoded=any(p.decoded for p in parts),
                downloaded=any(p.downloaded for p in parts),
                partial=visible or None,
            )
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
            _add_to_word(groups, child)
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
        if name == "find":
            return _Stream(None, decoded=decoded, found=tuple(w.text for w in args))
        files = [a for a in args if not a.text.startswith("-")]
        if name in ("cat", "tee") and (name == "tee" or not files):
            return _Stream(
                stream.text,
                stream.decoded,
                stream.downloaded,
                found=stream.found,
                partial=stream.partial,
            )
        if name == "sort" and not files:
            return _Stream(None, decoded=decoded, found=stream.found)  # the same lines
        return _Stream(None, decoded=decoded)
