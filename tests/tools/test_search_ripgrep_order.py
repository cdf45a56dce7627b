"""search with ripgrep: matches in ripgrep's --sort path order, though ripgrep is first run
on all its threads (unsorted) and sorted here; past the cap, the first matches in path
order, from a second, sorted run that stops at the cap."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from zcoder.tools import ToolContext
from zcoder.tools.search import search_workspace

RG = shutil.which("rg")
pytestmark = pytest.mark.skipif(RG is None, reason="ripgrep not installed")

# Names whose order differs between comparing whole paths ("a-b/x" < "a/x": '-' < '/')
# and comparing them component by component, as ripgrep's --sort path does ("a/x" first).
NAMES = ["a/x.txt", "a-b/x.txt", "a.b/x.txt", "a0.txt", "B/y.txt", "é/z.txt", "a/b/c.txt"]


@pytest.fixture
def many(workspace: Path) -> Path:
    for name in NAMES:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("needle one\nhay\nneedle two\n")
    for d in range(12):  # enough files for ripgrep's threads to finish out of order
        folder = workspace / f"pkg{d:02d}"
        folder.mkdir()
        for f in range(30):
            (folder / f"m{f:02d}.py").write_text(f"x = 1\nneedle = {d * 100 + f}\n")
    return workspace


def sorted_by_ripgrep(root: Path, limit: int | None = None) -> list[str]:
    """What ``rg --sort path`` itself prints, as path:line:text."""
    assert RG is not None
    done = subprocess.run(
        [RG, "--sort", "path", "--no-heading", "-n", "--hidden", "--no-require-git",
         "needle", "."],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    lines = [line.removeprefix("./") for line in done.stdout.splitlines()]
    return lines if limit is None else lines[:limit]


async def test_all_matches_come_in_ripgreps_path_order(ctx: ToolContext, many: Path) -> None:
    expected = sorted_by_ripgrep(many)
    assert len(expected) == 2 * len(NAMES) + 12 * 30
    for _ in range(3):  # the unsorted run's order varies; the answer must not
        result = await search_workspace(ctx, "needle", max_results=1000, ripgrep=RG)
        assert result.metadata == {"engine": "ripgrep", "matches": len(expected),
                                   "truncated": False}  # fmt: skip
        assert result.output.splitlines() == expected
    assert expected.index("a/x.txt:1:needle one") < expected.index("a-b/x.txt:1:needle one")


async def test_past_the_cap_the_first_matches_in_path_order(ctx: ToolContext, many: Path) -> None:
    expected = sorted_by_ripgrep(many, 25)
    for _ in range(3):
        result = await search_workspace(ctx, "needle", max_results=25, ripgrep=RG)
        lines = result.output.splitlines()
        assert lines[:-1] == expected
        assert "stopped after 25 matches" in lines[-1]
        assert result.metadata["truncated"] is True


async def test_exactly_as_many_matches_as_the_cap_is_not_truncated(
    ctx: ToolContext, many: Path
) -> None:
    total = len(sorted_by_ripgrep(many))
    result = await search_workspace(ctx, "needle", max_results=total, ripgrep=RG)
    assert result.metadata["truncated"] is False
    assert result.output.splitlines() == sorted_by_ripgrep(many)
