"""search with ripgrep: matches in ripgrep's --sort path order, though ripgrep is first run
on all its threads (unsorted) and sorted here; past the cap, the first matches in path
order, from a second, sorted run that stops at the cap."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from zcoder.tools import ToolContext, search
from zcoder.tools.search import MAX_LINE_CHARS, search_workspace

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


async def test_past_the_cap_unread_output_does_not_hang_the_search(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ripgrep is ended at the cap with more output unread than the reader buffers (so it
    stopped reading), and its exit is noticed late, as on a loaded machine: the search
    still ends, with the first matches. (It used to wait forever for a process whose
    unread output kept it from counting as finished.)"""
    monkeypatch.setattr(search, "_RG_LINE_LIMIT", 8192)  # buffers of 16 KiB, not 8 MiB
    waitpid = os.waitpid

    def late_waitpid(pid: int, options: int) -> tuple[int, int]:
        found = waitpid(pid, options)
        if options == 0:  # asyncio's watcher thread, which tells the loop of the exit
            time.sleep(0.5)
        return found

    monkeypatch.setattr(os, "waitpid", late_waitpid)
    line = "needle " + "x" * 400 + "\n"
    for n in range(20):
        (workspace / f"big{n:02d}.txt").write_text(line * 200)
    async with asyncio.timeout(60):  # a hang fails here, not at the suite's timeout
        result = await search_workspace(ctx, "needle", max_results=25, ripgrep=RG)
    lines = result.output.splitlines()
    assert result.metadata == {"engine": "ripgrep", "matches": 25, "truncated": True}
    assert len(lines) == 26 and "stopped after 25 matches" in lines[-1]
    assert lines[0].startswith("big00.txt:1:needle xxx")


async def test_a_match_in_a_line_of_hundreds_of_kilobytes_is_found_and_cut(
    ctx: ToolContext, workspace: Path
) -> None:
    """A minified file: ripgrep reports the whole line; the match is shown cut."""
    (workspace / "bundle.min.js").write_text("var a=1;" * 40_000 + "needle();\n")
    result = await search_workspace(ctx, "needle", ripgrep=RG)
    assert result.metadata == {"engine": "ripgrep", "matches": 1, "truncated": False}
    assert result.output == f"bundle.min.js:1:{('var a=1;' * 40_000)[:MAX_LINE_CHARS]} …"


async def test_a_line_longer_than_ripgreps_reader_takes_is_searched_in_python(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the longest line read from ripgrep, the search is done in Python: the same
    matches, not an error."""
    monkeypatch.setattr(search, "_RG_LINE_LIMIT", 65536)
    (workspace / "bundle.min.js").write_text("var a=1;" * 40_000 + "needle();\n")
    (workspace / "small.txt").write_text("a needle\n")
    result = await search_workspace(ctx, "needle", ripgrep=RG)
    assert result.metadata == {"engine": "python", "matches": 2, "truncated": False}
    assert result.output.splitlines()[1] == "small.txt:1:a needle"
