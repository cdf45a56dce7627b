"""search: the same path:line:text results from ripgrep and the Python fallback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from zcoder.tools import ToolContext, default_registry
from zcoder.tools.search import MAX_LINE_CHARS, search_workspace

RG = shutil.which("rg")
ENGINES = [
    pytest.param(None, id="python"),
    pytest.param(
        RG, id="ripgrep", marks=pytest.mark.skipif(RG is None, reason="ripgrep not installed")
    ),
]


@pytest.fixture
def tree(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 'needle'\n")
    (workspace / "src" / "util.py").write_text("NEEDLE = 1\nx = 'needle.*'\n")
    (workspace / "README.md").write_text("a needle in docs\n")
    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "dep.js").write_text("needle\n")
    (workspace / ".gitignore").write_text("ignored.txt\n")
    (workspace / "ignored.txt").write_text("needle\n")
    (workspace / "blob.bin").write_bytes(b"needle\x00\x01")
    return workspace


@pytest.mark.parametrize("engine", ENGINES)
async def test_regex_search_shape_and_ignores(ctx: ToolContext, tree: Path, engine) -> None:
    result = await search_workspace(ctx, "need+le", ripgrep=engine)
    assert result.ok
    assert result.output.splitlines() == [
        "README.md:1:a needle in docs",
        "src/app.py:2:    return 'needle'",
        "src/util.py:2:x = 'needle.*'",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_literal_search(ctx: ToolContext, tree: Path, engine) -> None:
    result = await search_workspace(ctx, "needle.*", literal=True, ripgrep=engine)
    assert result.output == "src/util.py:2:x = 'needle.*'"


@pytest.mark.parametrize("engine", ENGINES)
async def test_path_and_glob_filters(ctx: ToolContext, tree: Path, engine) -> None:
    in_src = await search_workspace(ctx, "needle", path="src", ripgrep=engine)
    assert [line.split(":")[0] for line in in_src.output.splitlines()] == [
        "src/app.py",
        "src/util.py",
    ]
    only_md = await search_workspace(ctx, "needle", glob="*.md", ripgrep=engine)
    assert only_md.output == "README.md:1:a needle in docs"
    not_md = await search_workspace(ctx, "needle", glob="!*.md", ripgrep=engine)
    assert "README.md" not in not_md.output and "src/app.py" in not_md.output


@pytest.mark.parametrize("engine", ENGINES)
async def test_single_file_and_no_matches(ctx: ToolContext, tree: Path, engine) -> None:
    one = await search_workspace(ctx, "NEEDLE", path="src/util.py", ripgrep=engine)
    assert one.output == "src/util.py:1:NEEDLE = 1"
    none = await search_workspace(ctx, "haystack", ripgrep=engine)
    assert none.ok and none.output == "No matches."


@pytest.mark.parametrize("engine", ENGINES)
async def test_max_results_and_long_lines(ctx: ToolContext, engine) -> None:
    (ctx.workspace / "many.txt").write_text("hit\n" * 50 + "hit" + "x" * 1000 + "\n")
    capped = await search_workspace(ctx, "hit", max_results=10, ripgrep=engine)
    lines = capped.output.splitlines()
    assert len(lines) == 11 and "stopped after 10 matches" in lines[-1]
    assert capped.metadata["truncated"] is True
    full = await search_workspace(ctx, "hitx", ripgrep=engine)
    assert full.output.endswith(" …")
    assert len(full.output) <= len("many.txt:51:") + MAX_LINE_CHARS + 2


async def test_invalid_regex_is_an_error(ctx: ToolContext, tree: Path) -> None:
    result = await search_workspace(ctx, "(unclosed", ripgrep=None)
    assert not result.ok and "literal=true" in result.output


async def test_search_tool_through_registry(ctx: ToolContext, tree: Path) -> None:
    registry = default_registry()
    result = await registry.dispatch("search", {"query": "main", "path": "src"}, ctx)
    assert result.ok and result.output == "src/app.py:1:def main():"
    outside = await registry.dispatch("search", {"query": "x", "path": "/"}, ctx)
    assert not outside.ok
    empty = await registry.dispatch("search", {"query": ""}, ctx)
    assert not empty.ok
