"""docs/development.md names only files, modules, symbols, flags and make targets that exist.

The page is how a new engineer finds their way; a name in it that the code no longer has
sends them looking for nothing (issue 28 found nine such claims). Every name in backticks is
checked against the tree, read with ``ast`` (nothing is imported):

- a path (``tui/parts/wiring.py``, ``tests/e2e/tmux.py``, ``tools/``) exists, from the repository's
  root or from ``src/zcoder``; a bare test file name (``test_turns.py``) names exactly one file;
- a module (``zcoder.relay``, ``zcoder.tui.state.interrupt:QUIT_WINDOW_SECONDS``) exists, and so
  does the name after the colon;
- ``Class.member`` names a class of the tree and a member defined in it (or in a base of it
  that the tree defines); a bare ``Name`` or ``name(...)`` or ``@decorator`` is defined in
  the tree (a class, function, or assigned name) or imported by it from a library;
- ``make TARGET`` is a target of the Makefile; ``--flag`` and ``zcoder --flag`` are options
  the CLI declares; ``NAME_IN_CAPITALS`` occurs in the source or the Makefile.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "zcoder"
PAGE = ROOT / "docs" / "development.md"

IDENTIFIER = r"[A-Za-z_]\w*"
SYMBOL = re.compile(rf"@?({IDENTIFIER}(?:\.{IDENTIFIER})*)(?:\(.*\))?")
MODULE = re.compile(rf"(zcoder(?:\.{IDENTIFIER})*)(?::({IDENTIFIER})(?:=.*)?)?")
CAPITALS = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


@dataclass
class Tree:
    """What the source defines, read once."""

    classes: dict[str, list[ast.ClassDef]] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    imported: set[str] = field(default_factory=set)
    used: set[str] = field(default_factory=set)  # attributes called or read: a library's API
    strings: set[str] = field(default_factory=set)  # identifiers written as strings: tool names
    text: str = ""

    @classmethod
    def read(cls, *roots: Path) -> Tree:
        tree = cls()
        texts: list[str] = []
        for root in roots:
            for path in sorted(root.rglob("*.py")):
                if path == Path(__file__).resolve():
                    continue  # this test's own made-up names
                source = path.read_text(encoding="utf-8")
                texts.append(source)
                tree.add(ast.parse(source, str(path)))
        tree.text = "\n".join(texts)
        return tree

    def add(self, module: ast.Module) -> None:
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, []).append(node)
                self.defined.add(node.name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.defined.add(node.id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                self.defined.add(node.target.id)
            elif isinstance(node, ast.Attribute):
                self.used.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(IDENTIFIER, node.value):
                    self.strings.add(node.value)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self.imported.update(
                    (alias.asname or alias.name).split(".")[0] for alias in node.names
                )

    def members(self, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """Names defined in the body of the classes called ``name``, and in their bases."""
        found: set[str] = set()
        for node in self.classes.get(name, []):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    found.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    found.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    found.update(t.id for t in item.targets if isinstance(t, ast.Name))
            for base in node.bases:
                base_name = base.id if isinstance(base, ast.Name) else None
                if base_name and base_name not in seen:
                    found |= self.members(base_name, seen | {name})
        return found


def names_in(page: str) -> list[str]:
    """Every backticked name of the page, code blocks left out."""
    prose = re.sub(r"```.*?```", "", page, flags=re.DOTALL)
    return sorted({name for name in re.findall(r"`([^`\n]+)`", prose)})


def is_path(name: str) -> bool:
    first = name.split("/", maxsplit=1)[0]
    return name.endswith(".py") or (
        "/" in name
        and not name.startswith(("/", "@", "."))
        and (first in {"src", "tests", "bench", "docs"} or (SRC / first).is_dir())
    )


def path_problem(name: str) -> str | None:
    if (ROOT / name).exists() or (SRC / name).exists():
        return None
    if "/" not in name:
        found = [p for p in (*ROOT.joinpath("tests").rglob(name), *SRC.rglob(name))]
        if len(found) == 1:
            return None
        return f"{name}: {len(found)} files have this name" if found else f"{name}: no file"
    return f"{name}: no such file or folder"


def module_source(module: str) -> Path | None:
    path = SRC.parent.joinpath(*module.split("."))
    source = path.with_suffix(".py") if path.with_suffix(".py").exists() else path / "__init__.py"
    return source if source.exists() else None


def module_problem(module: str, member: str | None, tree: Tree) -> str | None:
    """Whether ``module`` (or ``module:member``, or ``package.module.member``) exists."""
    source = module_source(module)
    if source is None and member is None and "." in module:
        module, _, member = module.rpartition(".")  # zcoder.base.lazy.face: a module's name
        source = module_source(module)
    if source is None:
        return f"{module}: no such module"
    if member is None:
        return None
    names = Tree()
    names.add(ast.parse(source.read_text(encoding="utf-8")))
    return None if member in names.defined else f"{module}:{member}: not defined there"


def flags_of_cli() -> set[str]:
    """The options zcoder declares, and those of the fixtures the page runs by hand."""
    flags: set[str] = set()
    for path in (*SRC.rglob("*.py"), *ROOT.joinpath("tests", "fixtures").rglob("*.py")):
        flags.update(re.findall(r"""["'](--[a-z][a-z-]*)["']""", path.read_text("utf-8")))
    return flags


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([\w.-]+):", text, flags=re.MULTILINE))


def problem(name: str, tree: Tree, flags: set[str], targets: set[str]) -> str | None:
    """Why ``name`` is not in the tree, or None when it is (or is no name of the tree)."""
    if name.startswith("make "):
        target = name.split()[1]
        return None if target in targets else f"{name}: no such make target"
    if name.startswith(("zcoder --", "--")):
        flag = name.removeprefix("zcoder ").split()[0]
        return None if flag in flags else f"{name}: no such option"
    if name.startswith("python -m "):
        return module_problem(name.split()[2], None, tree)
    if is_path(name):
        return path_problem(name)
    if " " in name or name.startswith(("/", ".")) or "/" in name:
        return None  # words, commands and URLs of other programs: not names of the tree
    if module := MODULE.fullmatch(name):
        return module_problem(module[1], module[2], tree)
    if CAPITALS.fullmatch(name):
        in_source = name in tree.text or name in (ROOT / "Makefile").read_text("utf-8")
        return None if in_source else f"{name}: occurs nowhere in the source"
    symbol = SYMBOL.fullmatch(name)
    if symbol is None:
        return None
    head, *rest = symbol[1].split(".")
    if rest and head in tree.classes:
        member = rest[0]
        return None if member in tree.members(head) else f"{name}: {head} has no {member}"
    if rest and head not in tree.defined:
        return None  # an expression such as ctx.stop.check(): its head is a local name
    if not rest and head in tree.used | tree.strings:
        return None  # a library's method the tree calls (post_message), a tool's name
    if head in tree.defined or head in tree.imported:
        return None
    return f"{name}: defined nowhere in the source"


@pytest.fixture(scope="module")
def tree() -> Tree:
    return Tree.read(SRC, ROOT / "tests", ROOT / "bench")


def test_every_name_on_the_page_exists(tree: Tree) -> None:
    flags, targets = flags_of_cli(), make_targets()
    names = names_in(PAGE.read_text(encoding="utf-8"))
    assert len(names) > 50  # the page names the code's parts; an empty read proves nothing
    problems = [p for name in names if (p := problem(name, tree, flags, targets))]
    assert not problems, "docs/development.md names what the code does not have:\n" + "\n".join(
        problems
    )


@pytest.mark.parametrize(
    "name",
    [
        "tui/no_such_part.py",
        "tests/nowhere/test_x.py",
        "test_no_such_file.py",
        "zcoder.no_such_module",
        "zcoder.base.no_such_module.name",
        "zcoder.base.sanitize.no_such_function",
        "zcoder.tui.state.interrupt:NO_SUCH_CONSTANT",
        "NoSuchClass",
        "ZcoderApp.no_such_method",
        "@no_such_decorator",
        "no_such_function(config)",
        "make no-such-target",
        "zcoder --no-such-flag",
        "ZCODER_NO_SUCH_SETTING",
    ],
)
def test_a_name_the_code_lacks_is_found(name: str, tree: Tree) -> None:
    assert problem(name, tree, flags_of_cli(), make_targets()) is not None


@pytest.mark.parametrize(
    "name",
    [
        "tui/app.py",
        "tools/",
        "tests/e2e/tmux.py",
        "zcoder.relay",
        "zcoder.base.sanitize.visible",
        "ZcoderApp",
        "ZcoderApp.make_main_screen",
        "make test",
        "zcoder --acp",
        "--prompt",
        "ZCODER_HOME",
        "session/list",
    ],
)
def test_a_name_the_code_has_passes(name: str, tree: Tree) -> None:
    assert problem(name, tree, flags_of_cli(), make_targets()) is None
