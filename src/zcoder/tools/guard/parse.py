"""tree-sitter-bash, and the ways the guard works around its faults.

The guard reads a command line with a real shell grammar rather than by splitting words,
so quoting, substitutions and compound commands are seen as bash sees them. Two faults of
tree-sitter-bash 0.25.1 are worked around here: it splits a word at a backslash-newline
(continuations are joined first, as bash does), and it can crash on ``{`` followed by a
four-byte UTF-8 character (those are parsed as U+FFFD). A third, splitting ``a$b-c$d``
after the second expansion, is mended where words are expanded (:mod:`.words`).
"""

from __future__ import annotations

import re
from functools import lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from zcoder.tools.guard.model import _short

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
"""Characters of four UTF-8 bytes: after a "{" they can crash tree-sitter-bash 0.25.1
(tree-sitter/tree-sitter-bash#337, found here by fuzzing too). They are parsed as U+FFFD,
a word character like them; no verdict depends on which one it was."""


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


def _operand(node: Node) -> Node | None:
    """The node to expand for one child of a command (the name's word for command_name)."""
    if node.type == "command_name":
        return node.named_children[0] if node.named_children else None
    return node


def _add_to_word(words: list[list[Node]], child: Node) -> None:
    """Add one child of a command to ``words``, each a list of touching nodes: a node that
    starts where the last one ends is part of the same word (tree-sitter-bash splits
    ``a$b-c$d`` after the second expansion)."""
    target = _operand(child)
    if target is None:
        return
    if words and words[-1][-1].end_byte == target.start_byte:
        words[-1].append(target)
    else:
        words.append([target])
