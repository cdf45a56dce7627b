"""The repository's side of a team, against real git repositories: worktrees on their own
branches, the merge preview (git merge-tree), merging exactly what was previewed, and a
conflicting branch reported with nothing merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.team.conftest import commit_file, run_git
from zcoder.relay import BadName
from zcoder.team.git import (
    TeamError,
    add_worktree,
    changed_files,
    merge,
    merge_preview,
    remove_worktree,
    worktrees_dir,
)
from zcoder.team.roster import Roster
from zcoder.team.spawn import plan_spawn


def worker(repo: Path, name: str) -> Path:
    plan = plan_spawn(repo, name, "a task", repo.parent / "home")
    add_worktree(plan.repo, plan.branch, plan.worktree)
    run_git(plan.worktree, "config", "user.email", "w@example.invalid")
    return plan.worktree


def test_a_worker_gets_a_worktree_beside_the_repository_on_its_own_branch(repo: Path) -> None:
    plan = plan_spawn(repo, "api", "fix it", repo.parent / "home")
    assert (plan.branch, plan.base) == ("zcoder/api", "main")
    assert plan.worktree == repo.parent / "project-worktrees" / "api" == worktrees_dir(repo) / "api"
    add_worktree(plan.repo, plan.branch, plan.worktree)
    assert run_git(plan.worktree, "branch", "--show-current") == "zcoder/api"
    assert (plan.worktree / "README").read_text() == "one\ntwo\nthree\n"
    with pytest.raises(TeamError, match="exists already"):
        plan_spawn(repo, "api", "again", repo.parent / "home")


def test_the_workers_directory_is_the_leads_subdirectory_in_its_worktree(repo: Path) -> None:
    (repo / "pkg").mkdir()
    commit_file(repo, "pkg/x.py", "x = 1\n", "pkg")
    plan = plan_spawn(repo / "pkg", "sub", "t", repo.parent / "home")
    assert plan.workdir == plan.worktree / "pkg"


@pytest.mark.parametrize(
    "name",
    ["../escape", "a/b", "a;touch pwned", "$(touch pwned)", "`id`", "a b", "-rf", ".hidden",
     "x\x1b[2J", "", "n" * 41],
)  # fmt: skip
def test_hostile_names_are_refused_before_anything_is_made(repo: Path, name: str) -> None:
    with pytest.raises((BadName, TeamError)):
        plan_spawn(repo, name, "task", repo.parent / "home")
    assert run_git(repo, "branch", "--list", "zcoder/*") == ""
    assert not worktrees_dir(repo).exists()
    assert not (repo / "pwned").exists() and not (repo.parent / "pwned").exists()


@pytest.mark.parametrize("name", ["a..b", "x.lock", "end."])
def test_names_git_cannot_take_as_a_branch_are_refused_clearly(repo: Path, name: str) -> None:
    with pytest.raises(TeamError, match="not a usable git branch name"):
        plan_spawn(repo, name, "task", repo.parent / "home")


def test_an_existing_branch_or_worktree_folder_is_refused_never_reused(repo: Path) -> None:
    run_git(repo, "branch", "zcoder/taken")
    with pytest.raises(TeamError, match="the branch zcoder/taken exists already"):
        plan_spawn(repo, "taken", "t", repo.parent / "home")
    (worktrees_dir(repo) / "there").mkdir(parents=True)
    with pytest.raises(TeamError, match="exists already"):
        plan_spawn(repo, "there", "t", repo.parent / "home")


def test_outside_a_repository_and_on_a_detached_head_a_spawn_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(TeamError, match="not in a git repository"):
        plan_spawn(plain, "w", "t", tmp_path / "home")
    run_git(repo, "checkout", "-q", "--detach")
    with pytest.raises(TeamError, match="detached"):
        plan_spawn(repo, "w", "t", tmp_path / "home")


def test_a_clean_branch_is_previewed_then_merged_as_previewed(repo: Path) -> None:
    tree = worker(repo, "w")
    commit_file(tree, "new.txt", "hello\n", "worker's change")
    preview = merge_preview(repo, "zcoder/w")
    assert preview.clean and preview.commits == 1
    assert "new.txt" in preview.stat and "+hello" in preview.diff
    head = run_git(repo, "rev-parse", "HEAD")
    assert merge(repo, preview).endswith("Merge branch 'zcoder/w'")
    assert (repo / "new.txt").read_text() == "hello\n"
    assert run_git(repo, "rev-parse", "HEAD^1") == head


def test_a_conflicting_branch_is_reported_with_its_files_and_nothing_merges(repo: Path) -> None:
    tree = worker(repo, "w")
    commit_file(tree, "README", "one\nTWO by the worker\nthree\n", "worker")
    commit_file(tree, "other.txt", "fine\n", "worker, no conflict")
    commit_file(repo, "README", "one\ntwo by the lead\nthree\n", "lead")
    head = run_git(repo, "rev-parse", "HEAD")
    preview = merge_preview(repo, "zcoder/w")
    assert not preview.clean
    assert preview.conflicts == ("README",)
    with pytest.raises(TeamError, match="conflicts: nothing was merged"):
        merge(repo, preview)
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert run_git(repo, "status", "--porcelain") == ""
    assert not (repo / "other.txt").exists()


def test_a_merge_is_refused_when_the_branch_moved_since_the_preview(repo: Path) -> None:
    tree = worker(repo, "w")
    commit_file(tree, "a.txt", "a\n", "first")
    preview = merge_preview(repo, "zcoder/w")
    commit_file(tree, "b.txt", "b\n", "after the preview")
    head = run_git(repo, "rev-parse", "HEAD")
    with pytest.raises(TeamError, match="changed since the preview"):
        merge(repo, preview)
    assert run_git(repo, "rev-parse", "HEAD") == head


def test_a_merge_git_refuses_leaves_the_lead_as_it_was(repo: Path) -> None:
    tree = worker(repo, "w")
    commit_file(tree, "README", "one\ntwo\nthree\nfour\n", "worker")
    preview = merge_preview(repo, "zcoder/w")
    (repo / "README").write_text("the lead's unsaved work\n")  # uncommitted, in the way
    with pytest.raises(TeamError, match="nothing was merged"):
        merge(repo, preview)
    assert (repo / "README").read_text() == "the lead's unsaved work\n"
    assert run_git(repo, "log", "-1", "--format=%s") == "init"


def test_a_dirty_worktree_is_seen_and_removed_only_by_force(repo: Path) -> None:
    tree = worker(repo, "w")
    (tree / "README").write_text("changed\n")
    (tree / "untracked name\twith tab").write_text("x")
    assert sorted(changed_files(tree)) == ["README", "untracked name\twith tab"]
    with pytest.raises(TeamError):
        remove_worktree(repo, tree, force=False)
    assert tree.exists()
    remove_worktree(repo, tree, force=True)
    assert not tree.exists()
    assert run_git(repo, "branch", "--list", "zcoder/w") == "zcoder/w"  # the branch stays


def test_the_roster_survives_a_restart_and_drops_what_is_not_well_formed(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    plan = plan_spawn(repo, "w", "t", home)
    roster = Roster(home, repo)
    worker_entry = plan.worker()
    worker_entry.messages.append("1-2-3")
    roster.put(worker_entry)
    again = Roster(home, repo).find("W")  # names are found case-insensitively
    assert again is not None and again.messages == ["1-2-3"] and again.branch == "zcoder/w"
    assert roster.path.stat().st_mode & 0o777 == 0o600
    text = roster.path.read_text()
    damaged = text.replace('"pid": 0', '"pid": "0; rm -rf /"')
    roster.path.write_text(damaged)
    assert Roster(home, repo).load() == []
    roster.path.write_text('{"workers": [{"name": "../x", "branch": "b", "worktree": "/",'
                           ' "workdir": "/", "base": "main"}]}')  # fmt: skip
    assert Roster(home, repo).load() == []
    roster.path.write_text("not json")
    assert Roster(home, repo).load() == []


def test_by_hand_the_commands_are_quoted_and_control_characters_shown_escaped(
    repo: Path,
) -> None:
    from zcoder.team.spawn import WorkerFlags, by_hand

    plan = plan_spawn(repo, "helper", "fix it'; rm -rf ~ \x1b[2J\r", repo.parent / "home")
    text = by_hand(plan, WorkerFlags("qwen3-coder", host="http://127.0.0.1:11434"))
    assert "\x1b" not in text and "\r" not in text
    assert "\\e[2J" in text
    assert "zcoder send helper 'fix it'\"'\"'; rm -rf ~ \\e[2J'" in text
    assert "worktree add -b zcoder/helper" in text
    assert "zcoder --name helper --model qwen3-coder --host http://127.0.0.1:11434" in text


def test_a_worker_starts_with_the_leads_choices_but_never_with_yes() -> None:
    from zcoder.team.spawn import WorkerFlags

    plain = WorkerFlags("qwen3-coder")
    assert plain.flags() == ["--model", "qwen3-coder"]
    chosen = WorkerFlags(
        "m", "openai", base_url="http://127.0.0.1:8080/v1", profile="sysadmin",
        mode="plan", context_window=16384, no_think=True, deny_commands=True,
    )  # fmt: skip
    assert chosen.flags() == [
        "--model", "m", "--backend", "openai", "--base-url", "http://127.0.0.1:8080/v1",
        "--profile", "sysadmin", "--mode", "plan", "--context-window", "16384",
        "--no-think", "--deny-commands",
    ]  # fmt: skip
    assert WorkerFlags("m", gguf="/models/a b.gguf").flags() == [
        "--model", "m", "--gguf", "/models/a b.gguf",
    ]  # fmt: skip
