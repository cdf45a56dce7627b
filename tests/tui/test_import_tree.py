"""The TUI's modules import one another as a tree: no circles, TYPE_CHECKING imports included.

Parents call down into children and children post messages up (tui/messages.py), so no
module needs to import the one that uses it: the parts behind the screen take the services
and a way to post messages (tui/parts/services.py), never the app or the screen. Only the module
that runs the app imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import zcoder.tui

TUI = Path(zcoder.tui.__file__).parent
APP = "zcoder.tui.app"
RUNS_THE_APP = frozenset({"zcoder.tui.run"})  # not a circle: the app never imports it


def tui_imports() -> dict[str, set[str]]:
    """Each module of tui/ and the modules of tui/ it imports, wherever the import is."""
    modules = {f"zcoder.tui.{p.stem}": p for p in TUI.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                target = APP if node.module == "zcoder.tui" else node.module
                found.add(target)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each path that leads from a module back to it, once."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(start: str, here: str, path: list[str]) -> None:
        for target in sorted(graph[here]):
            if target == start:
                key = frozenset(path)
                if key not in seen:
                    seen.add(key)
                    found.append([*path, start])
            elif target not in path and target > start:  # each circle from its least module
                walk(start, target, [*path, target])

    for start in sorted(graph):
        walk(start, start, [start])
    return found


def test_only_the_runner_imports_the_app() -> None:
    graph = tui_imports()
    assert {name for name, targets in graph.items() if APP in targets} == RUNS_THE_APP


def test_the_imports_form_a_tree() -> None:
    assert circles(tui_imports()) == []


def test_the_circle_finder_finds_circles_and_only_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []
