"""Counted nouns (zcoder.base.plural): the one helper every message with a count goes through."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from zcoder.base.plural import counted, plural

SRC = Path(__file__).resolve().parent.parent / "src" / "zcoder"


@pytest.mark.parametrize(
    ("count", "noun", "many", "expected"),
    [
        (0, "skill", None, "0 skills"),
        (1, "skill", None, "1 skill"),
        (2, "skill", None, "2 skills"),
        (1, "earlier line", None, "1 earlier line"),
        (1500, "match", "matches", "1,500 matches"),
        (1, "match", "matches", "1 match"),
    ],
)
def test_counted_agrees_with_its_count(count: int, noun: str, many: str | None, expected: str):
    assert counted(count, noun, many) == expected


def test_plural_alone() -> None:
    assert plural(1, "argument") == "argument" and plural(3, "argument") == "arguments"
    assert plural(1, "is", "are") == "is" and plural(0, "is", "are") == "are"


def _texts(tree: ast.AST) -> list[str]:
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_no_message_hedges_a_plural_with_s_in_brackets() -> None:
    # "1 file(s)" and "argument(s)": messages say the one form that fits their count
    # (relay/ is left to its owner; comments and docstrings are not messages).
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "relay":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and "(s)" in node.value
            ):
                found.append(f"{path.relative_to(SRC)}: {node.value!r}")
    assert found == []
