"""The .gitignore subset used by list_files and the search fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcoder.tools.ignore import IgnoreMatcher, compile_gitignore_pattern, walk


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.log", "a.log", True),
        ("*.log", "deep/dir/a.log", True),
        ("*.log", "a.logx", False),
        ("/build", "build", True),
        ("/build", "sub/build", False),
        ("doc/*.txt", "doc/a.txt", True),
        ("doc/*.txt", "doc/sub/a.txt", False),
        ("**/cache", "a/b/cache", True),
        ("**/cache", "cache", True),
        ("logs/**", "logs/a/b", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("[abc].py", "b.py", True),
        ("[!abc].py", "b.py", False),
        ("\\#hash", "#hash", True),
    ],
)
def test_pattern_matching(pattern: str, path: str, matches: bool) -> None:
    compiled = compile_gitignore_pattern(pattern)
    assert compiled is not None
    assert bool(compiled[0].match(path)) is matches


@pytest.mark.parametrize("line", ["", "   ", "# comment", "/"])
def test_blank_and_comment_lines(line: str) -> None:
    assert compile_gitignore_pattern(line) is None


def test_negation_dir_only_and_nested_gitignore(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("*.tmp\n!keep.tmp\nout/\n")
    (workspace / "a.tmp").write_text("")
    (workspace / "keep.tmp").write_text("")
    (workspace / "out").mkdir()
    (workspace / "out" / "x").write_text("")
    (workspace / "notdir").mkdir()
    (workspace / "out_file").write_text("")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / ".gitignore").write_text("generated.py\n")
    (workspace / "pkg" / "generated.py").write_text("")
    (workspace / "pkg" / "real.py").write_text("")
    (workspace / "generated.py").write_text("")  # the nested rule does not apply above it
    found = sorted(entry.path for entry in walk(workspace, "", IgnoreMatcher(workspace)))
    assert found == [
        ".gitignore", "generated.py", "keep.tmp", "notdir", "out_file", "pkg",
        "pkg/.gitignore", "pkg/real.py",
    ]  # fmt: skip


def test_dir_only_rule_does_not_hide_a_file(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("cache/\n")
    (workspace / "cache").write_text("a file named cache")
    assert [entry.path for entry in walk(workspace, "", IgnoreMatcher(workspace))] == [
        ".gitignore",
        "cache",
    ]


def test_walking_an_ignored_dir_explicitly_lists_it(workspace: Path) -> None:
    (workspace / "node_modules" / "dep").mkdir(parents=True)
    entries = [entry.path for entry in walk(workspace, "node_modules", IgnoreMatcher(workspace))]
    assert entries == ["node_modules/dep"]


def test_walk_does_not_enter_symlinked_dirs(workspace: Path, outside: Path) -> None:
    (workspace / "out").symlink_to(outside)
    entries = list(walk(workspace, "", IgnoreMatcher(workspace)))
    assert [(entry.path, entry.is_symlink, entry.is_dir) for entry in entries] == [
        ("out", True, False)
    ]
    # Asked to walk the link itself: nothing from outside is listed.
    assert list(walk(workspace, "out", IgnoreMatcher(workspace))) == []
