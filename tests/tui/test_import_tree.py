"""The TUI's modules import one another as a tree: no circles, TYPE_CHECKING imports included.

tui/ is four packages and the app's modules: parts/ (plain objects behind the screen),
widgets/, dialogs/, and state/, the pieces with no Textual: nothing in state/ imports
Textual, or a module of tui/ outside state/.

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


def tui_modules() -> dict[str, Path]:
    """Each module of tui/ and its subpackages by dotted name (no ``__init__``)."""
    return {
        ".".join(("zcoder", "tui", *p.relative_to(TUI).with_suffix("").parts)): p
        for p in sorted(TUI.rglob("*.py"))
        if p.stem != "__init__"
    }


def imported(path: Path) -> set[str]:
    """The modules ``path`` imports, wherever the import is; ``from P import M`` names
    ``P.M`` as well as ``P`` (M may be a module of the package P)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def tui_imports() -> dict[str, set[str]]:
    """Each module of tui/ and the modules of tui/ it imports, wherever the import is."""
    modules = tui_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = {APP if m == "zcoder.tui" else m for m in imported(path)}
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


def test_the_modules_are_filed_in_packages() -> None:
    at_the_top = {name for name in tui_modules() if name.count(".") == 2}
    assert at_the_top == {
        "zcoder.tui.app",
        "zcoder.tui.main_screen",
        "zcoder.tui.messages",
        "zcoder.tui.run",
        "zcoder.tui.terminal",
    }


def test_state_has_no_textual() -> None:
    state = TUI / "state"
    modules = tui_modules()
    assert list(state.glob("*.py"))
    for path in state.glob("*.py"):
        names = imported(path)
        assert not {n for n in names if n.split(".")[0] in {"textual", "rich"}}, path.name
        outside = {n for n in names if n in modules and not n.startswith("zcoder.tui.state.")}
        assert not outside, (path.name, outside)


def test_the_imports_form_a_tree() -> None:
    assert circles(tui_imports()) == []


def test_the_circle_finder_finds_circles_and_only_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []
