"""AGENTS.md chain: home, then git root down to the workspace; 32 KiB, nearest first."""

from __future__ import annotations

from pathlib import Path

from zcoder.agent import load_instructions
from zcoder.agent.instructions import MAX_INSTRUCTIONS_BYTES


def tree(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    workspace = repo / "pkg" / "ws"
    workspace.mkdir(parents=True)
    home.mkdir()
    (repo / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("above the repo: never read\n")
    (home / "AGENTS.md").write_text("home rules\n")
    (repo / "AGENTS.md").write_text("repo rules\n")
    (repo / "pkg" / "AGENTS.md").write_text("pkg rules\n")
    (workspace / "AGENTS.md").write_text("workspace rules\n")
    return home, workspace.resolve()


def test_chain_runs_from_home_through_git_root_to_the_workspace(tmp_path: Path) -> None:
    home, workspace = tree(tmp_path)
    files = load_instructions(workspace, home)
    assert [f.text for f in files] == [
        "home rules\n",
        "repo rules\n",
        "pkg rules\n",
        "workspace rules\n",
    ]


def test_the_size_cap_cuts_the_general_files_not_the_nearest(tmp_path: Path) -> None:
    home, workspace = tree(tmp_path)
    (home / "AGENTS.md").write_text("h" * (MAX_INSTRUCTIONS_BYTES + 10))
    files = load_instructions(workspace, home)
    assert files[-1].text == "workspace rules\n"
    assert [f.truncated for f in files] == [True, False, False, False]
    assert sum(len(f.text.encode()) for f in files) == MAX_INSTRUCTIONS_BYTES
