"""No two classes of the zcoder package share a name, private ones and nested ones included.

A name that means two things (a TUI message and an agent event both called ``Notice``, an
MCP server's connection and an SSH one both ``Connection``) makes a reader, a search and
an import guess; each class gets a name of its own.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import zcoder

SRC = Path(zcoder.__file__).parent


def class_names(source: str) -> list[str]:
    """The name of every class ``source`` defines, at any depth."""
    return [node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)]


def duplicates(root: Path) -> dict[str, list[str]]:
    """Each class name defined more than once under ``root``, and the files that define it."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for name in class_names(path.read_text(encoding="utf-8")):
            where[name].append(path.relative_to(root).as_posix())
    return {name: places for name, places in where.items() if len(places) > 1}


def test_no_two_classes_share_a_name() -> None:
    assert duplicates(SRC) == {}


def test_the_finder_finds_a_name_defined_twice(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("class Notice:\n    class Inner: ...\n", encoding="utf-8")
    twice = "def f():\n    class Inner: ...\nclass Notice: ...\n"
    (tmp_path / "b.py").write_text(twice, encoding="utf-8")
    (tmp_path / "c.py").write_text("class Only: ...\n", encoding="utf-8")
    assert duplicates(tmp_path) == {"Inner": ["a.py", "b.py"], "Notice": ["a.py", "b.py"]}
