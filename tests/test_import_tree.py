"""The modules of zcoder import each other as a tree: no circle, however long; the leaf
package imports nothing above it; outside the relay only the relay's face is imported.

A circle makes a module's meaning depend on import order and hides which module owns a
definition; shared definitions belong in a module below both (issue 19). Each module
under src/zcoder is read with ``ast`` (nothing is imported): every ``import`` and
``from ... import`` counts, those under ``if TYPE_CHECKING:`` and inside functions
included; relative imports are resolved against the module's package; in
``from pkg import name`` the name counts as the submodule ``pkg.name`` when it is one,
else as ``pkg`` itself.

Two rules of issue 28 are held here too: ``zcoder.base`` (what every layer uses) imports
nothing else of zcoder, and code outside ``zcoder.relay`` imports the relay only through
its face, ``zcoder.relay`` (``from zcoder.relay import Relay``), never a module of it
(``zcoder.relay.names``, nor ``from zcoder.relay import names``). Tests and benchmarks
are not under src/ and may import the relay's modules, for white-box tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "zcoder"
LEAF = "zcoder.base"
FACED = "zcoder.relay"


def module_files(src: Path = SRC) -> dict[str, tuple[Path, bool]]:
    """Every module's dotted name → (its file, whether it is a package's __init__)."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def imports_of(
    name: str, path: Path, is_package: bool, modules: dict[str, tuple[Path, bool]]
) -> set[str]:
    """The modules of the package that ``name`` imports, by the rules of the docstring."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    found.add(submodule)
                elif source in modules:
                    found.add(source)
    found.discard(name)
    return found


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    modules = module_files(src)
    return {
        name: imports_of(name, path, is_package, modules)
        for name, (path, is_package) in modules.items()
    }


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def leaf_breaches(graph: dict[str, set[str]], leaf: str = LEAF) -> list[tuple[str, str]]:
    """(module of the leaf, what it imports from outside the leaf), sorted."""
    return sorted(
        (name, target)
        for name, targets in graph.items()
        if inside(name, leaf)
        for target in targets
        if not inside(target, leaf)
    )


def face_bypasses(graph: dict[str, set[str]], package: str = FACED) -> list[tuple[str, str]]:
    """(module outside ``package``, a module of ``package`` it imports), sorted."""
    return sorted(
        (name, target)
        for name, targets in graph.items()
        if not inside(name, package)
        for target in targets
        if target.startswith(f"{package}.")
    )


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected parts of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                target = pending.pop()
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, sorted(graph[target])))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                part: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.add(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(frozenset(part))
    return found


def a_cycle(graph: dict[str, set[str]], part: frozenset[str]) -> list[str]:
    """One import circle through the modules of ``part``, as a path back to its start."""
    start = min(part)
    paths: dict[str, list[str]] = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node] & part):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    raise AssertionError(f"no circle through {sorted(part)}")


def describe(graph: dict[str, set[str]], part: frozenset[str]) -> str:
    return f"{' -> '.join(a_cycle(graph, part))} ({len(part)} modules in the circle)"


def test_the_finder_names_a_circle_through_a_type_checking_import(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "low.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..high import Thing\n"
    )
    (package / "high.py").write_text("from zcoder.sub import low\n")
    (package / "tree.py").write_text("from . import high\nimport zcoder.sub.low\n")
    graph = import_graph(tmp_path)
    assert graph["zcoder.sub.low"] == {"zcoder.high"}
    assert graph["zcoder.high"] == {"zcoder.sub.low"}
    assert graph["zcoder.tree"] == {"zcoder.high", "zcoder.sub.low"}
    found = circles(graph)
    assert found == [frozenset({"zcoder.high", "zcoder.sub.low"})]
    assert describe(graph, found[0]) == (
        "zcoder.high -> zcoder.sub.low -> zcoder.high (2 modules in the circle)"
    )


def test_zcoder_imports_form_a_tree() -> None:
    graph = import_graph()
    assert "zcoder.agent.core" in graph  # the walk found the package
    found = circles(graph)
    assert not found, "import circles: " + "; ".join(describe(graph, part) for part in found)


# The front-end line (issue 28, item 3): the agent keeps the turn and the front ends keep
# their policy. What the front ends share (opening a session, assembling the agent, resume,
# the relay inbox, auto turns) is zcoder.frontend, which only they and cli.py import; the
# layers below them never import it nor a front end.
FRONTEND = "zcoder.frontend"
FRONT_ENDS = ("zcoder.tui", "zcoder.acp", "zcoder.remote", "zcoder.oneshot")
BELOW_THE_FRONT_ENDS = (
    "zcoder.agent",
    "zcoder.model",
    "zcoder.tools",
    "zcoder.sessions",
    "zcoder.relay",
    # What the agent is built with (docs/development.md: front ends -> agent -> these).
    "zcoder.mcp",
    "zcoder.skills",
    "zcoder.hooks",
    "zcoder.commands",
    # The settings every front end reads: no front end's module among them (issue 28, item 4).
    "zcoder.config",
    "zcoder.options",
    "zcoder.option_values",
)
FRONTEND_USERS = (*FRONT_ENDS, FRONTEND, "zcoder.cli")


def within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


def front_end_line_crossings(graph: dict[str, set[str]]) -> list[str]:
    """Each import that crosses the front-end line, as ``importer -> imported (why)``."""
    found: list[str] = []
    for name in sorted(graph):
        for target in sorted(graph[name]):
            upward = within(target, (FRONTEND, *FRONT_ENDS))
            if upward and within(name, BELOW_THE_FRONT_ENDS):
                found.append(f"{name} -> {target} (below the front ends)")
            elif within(target, (FRONTEND,)) and not within(name, FRONTEND_USERS):
                found.append(f"{name} -> {target} (only front ends and cli use {FRONTEND})")
            elif within(target, FRONT_ENDS) and within(name, (FRONTEND,)):
                found.append(f"{name} -> {target} ({FRONTEND} serves the front ends)")
    return found


TYPE_CHECKING_BLOCK = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"


def synthetic_tree(root: Path, files: dict[str, str]) -> dict[str, set[str]]:
    """The import graph of a made-up zcoder: ``files`` maps a path under the package to
    its text; every folder on the way gets an empty ``__init__.py`` unless given one."""
    package = root / PACKAGE
    package.mkdir()
    for name in files:
        folder = package
        for part in Path(name).parent.parts:
            folder /= part
            folder.mkdir(exist_ok=True)
            (folder / "__init__.py").touch()
    (package / "__init__.py").touch()
    for name, text in files.items():
        (package / name).write_text(text)
    return import_graph(root)


def test_the_front_end_rule_names_each_crossing(tmp_path: Path) -> None:
    graph = synthetic_tree(
        tmp_path,
        {
            "cli.py": "from zcoder.frontend import session\n",
            "agent/core.py": "from zcoder.frontend.session import x\n",
            "tools/shell.py": f"{TYPE_CHECKING_BLOCK}    from zcoder.tui import app\n",
            "hooks/engine.py": "def f():\n    import zcoder.frontend.session\n",
            "plugins/load.py": "from zcoder.frontend import session\n",
            "frontend/session.py": "from zcoder.agent import core\n",
            "frontend/inbox.py": "from ..oneshot import run\n",
            "tui/app.py": "from zcoder.frontend.session import x\n",
            "oneshot/run.py": "from zcoder.frontend import session\n",
        },
    )
    assert front_end_line_crossings(graph) == [
        "zcoder.agent.core -> zcoder.frontend.session (below the front ends)",
        "zcoder.frontend.inbox -> zcoder.oneshot.run (zcoder.frontend serves the front ends)",
        "zcoder.hooks.engine -> zcoder.frontend.session (below the front ends)",
        "zcoder.plugins.load -> zcoder.frontend.session (only front ends and cli use "
        "zcoder.frontend)",
        "zcoder.tools.shell -> zcoder.tui.app (below the front ends)",
    ]


def test_only_front_ends_and_cli_import_the_frontend_package() -> None:
    graph = import_graph()
    assert "zcoder.frontend.session" in graph  # the walk found the package
    found = front_end_line_crossings(graph)
    assert not found, "imports across the front-end line:\n" + "\n".join(found)


def test_the_rules_name_a_leaf_that_imports_upward_and_a_bypassed_face(tmp_path: Path) -> None:
    graph = synthetic_tree(
        tmp_path,
        {
            "relay/__init__.py": f"{TYPE_CHECKING_BLOCK}    from .names import name_of\n",
            "relay/names.py": "from zcoder.base import text\n",
            "relay/spool.py": "from zcoder.relay.names import name_of\n",
            "base/text.py": "import json\nfrom . import lazy\n",
            "base/lazy.py": "def later():\n    from zcoder.relay import name_of\n",
            "tui/fine.py": "from zcoder.relay import name_of\n",
            "tui/deep.py": "from zcoder.relay.names import name_of\n",
            "tui/sneaky.py": "from ..relay import names\n",
        },
    )
    assert leaf_breaches(graph) == [("zcoder.base.lazy", "zcoder.relay")]
    assert face_bypasses(graph) == [
        ("zcoder.tui.deep", "zcoder.relay.names"),
        ("zcoder.tui.sneaky", "zcoder.relay.names"),
    ]


def test_the_leaf_package_imports_nothing_else_of_zcoder() -> None:
    graph = import_graph()
    assert "zcoder.base.sanitize" in graph  # the walk found the leaf
    breaches = leaf_breaches(graph)
    assert not breaches, "zcoder.base imports above itself: " + "; ".join(
        f"{name} -> {target}" for name, target in breaches
    )


def test_outside_the_relay_only_its_face_is_imported() -> None:
    graph = import_graph()
    bypasses = face_bypasses(graph)
    assert not bypasses, "import from zcoder.relay (its face) instead: " + "; ".join(
        f"{name} -> {target}" for name, target in bypasses
    )


MAX_MODULE_LINES = 500


def test_no_module_passes_five_hundred_lines() -> None:
    """Issue 28: a module past 500 lines is split by job before anything is added to it."""
    long = {
        name: lines
        for name, (path, _) in module_files().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"
