"""The repository's side of a team: a worker's worktree and branch, its diff against the
lead's branch, whether it merges cleanly (``git merge-tree --write-tree``, git 2.38 or
later) and the merge itself.

Every call runs ``git`` with an argument list (never a shell), no terminal prompt, no
pager, the C locale (its words are read here) and a deadline; what git says goes into a
``TeamError`` the user reads.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from zcoder.base.errors import ZcoderError

GIT_TIMEOUT: Final = 60.0
BRANCH_PREFIX: Final = "zcoder/"
WORKTREES_SUFFIX: Final = "-worktrees"
# The diff a merge preview shows at most (the stat is always whole).
DIFF_MAX_CHARS: Final = 400_000


ANY_STATUS: Final = tuple(range(256))  # the caller reads the status itself


class TeamError(ZcoderError):
    """A team operation that cannot be done; the message says why and what to do."""


def run_program(
    argv: list[str], *, timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``argv`` run with no shell and no terminal, its output read as text, within
    ``timeout``; TeamError when it cannot run at all (not when it fails: its status is
    the caller's to read)."""
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise TeamError(f"{argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise TeamError(f"{argv[0]} {argv[1]} took more than {timeout:g} s") from None
    except OSError as exc:
        raise TeamError(f"{argv[0]} {argv[1]} could not run: {exc.strerror}") from None


def git(cwd: Path, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    """``git args`` in ``cwd``; TeamError when its exit status is not in ``ok``."""
    env = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat",
        "LC_ALL": "C",
        "GIT_EDITOR": "true",
    }
    done = run_program(["git", *args], timeout=GIT_TIMEOUT, cwd=cwd, env=env)
    if done.returncode not in ok:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise TeamError(f"git {args[0]} failed: {' '.join(said[-3:]) or done.returncode}")
    return done


def repo_root(path: Path) -> Path:
    """The top of the worktree ``path`` is in (TeamError outside a git repository)."""
    try:
        done = git(path, "rev-parse", "--show-toplevel")
    except TeamError:
        raise TeamError(f"{path} is not in a git repository: a worker needs one") from None
    return Path(done.stdout.strip())


def current_branch(repo: Path) -> str:
    """The branch checked out in ``repo`` (TeamError on a detached HEAD)."""
    done = git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", ok=(0, 1))
    if done.returncode != 0 or not done.stdout.strip():
        raise TeamError("HEAD is detached here: check out a branch first")
    return done.stdout.strip()


def branch_for(repo: Path, name: str) -> str:
    """``zcoder/NAME``, checked by git's own rules for a branch name."""
    branch = BRANCH_PREFIX + name
    done = git(repo, "check-ref-format", "--branch", branch, ok=(0, 1, 128))
    if done.returncode != 0:
        raise TeamError(f"{branch!r} is not a usable git branch name: choose another name")
    return branch


def branch_exists(repo: Path, branch: str) -> bool:
    done = git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", ok=(0, 1))
    return done.returncode == 0


def worktrees_dir(repo: Path) -> Path:
    """Where workers' worktrees go: ``<repo>-worktrees``, beside the repository (not in
    it: the lead's tools, searches and git status never see them)."""
    return repo.parent / f"{repo.name}{WORKTREES_SUFFIX}"


def add_worktree(repo: Path, branch: str, path: Path) -> None:
    """A new worktree at ``path`` on a new ``branch`` from HEAD; an existing branch or
    path is refused, never reused."""
    if branch_exists(repo, branch):
        raise TeamError(f"the branch {branch} exists already: choose another name")
    if os.path.lexists(path):
        raise TeamError(f"{path} exists already: choose another name, or remove it first")
    path.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "add", "-b", branch, "--", str(path), "HEAD")


def changed_files(path: Path) -> list[str]:
    """Files with uncommitted changes in the worktree at ``path`` (untracked ones too)."""
    done = git(path, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    return [entry[3:] for entry in done.stdout.split("\0") if len(entry) > 3]


@dataclass(frozen=True)
class MergePreview:
    """What merging ``branch`` (at ``tip``) into HEAD (at ``head``) would do."""

    branch: str
    head: str
    tip: str
    commits: int  # commits on the branch that HEAD lacks
    stat: str  # git diff --stat, from the merge base to the branch
    diff: str  # the diff itself (cut at DIFF_MAX_CHARS)
    conflicts: tuple[str, ...]  # files that would conflict; empty: it merges cleanly

    @property
    def clean(self) -> bool:
        return not self.conflicts


def merge_preview(repo: Path, branch: str) -> MergePreview:
    """The branch's changes against HEAD, and whether it merges cleanly, by
    ``git merge-tree --write-tree`` (nothing in the worktree or the index is touched)."""
    if not branch_exists(repo, branch):
        raise TeamError(f"there is no branch {branch}")
    head = git(repo, "rev-parse", "--verify", "HEAD").stdout.strip()
    tip = git(repo, "rev-parse", "--verify", f"refs/heads/{branch}").stdout.strip()
    commits = int(git(repo, "rev-list", "--count", f"{head}..{tip}").stdout.strip() or 0)
    stat = git(repo, "diff", "--stat", f"{head}...{tip}").stdout.rstrip()
    diff = git(repo, "diff", f"{head}...{tip}").stdout
    if len(diff) > DIFF_MAX_CHARS:
        diff = diff[:DIFF_MAX_CHARS] + f"\n… (cut at {DIFF_MAX_CHARS} characters)\n"
    tried = git(
        repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", head, tip,
        ok=(0, 1),
    )  # fmt: skip
    conflicts: tuple[str, ...] = ()
    if tried.returncode == 1:
        # The tree's id, then the conflicted files, each ended by NUL (-z).
        names = tried.stdout.split("\0")[1:]
        conflicts = tuple(dict.fromkeys(name for name in names if name))
    return MergePreview(branch, head, tip, commits, stat, diff, conflicts)


def merge(repo: Path, preview: MergePreview) -> str:
    """Merge exactly what was previewed: refused when HEAD or the branch moved since, or
    when it conflicts. Returns git's one-line summary."""
    if not preview.clean:
        raise TeamError(f"{preview.branch} conflicts: nothing was merged")
    now = merge_preview(repo, preview.branch)
    if (now.head, now.tip) != (preview.head, preview.tip):
        raise TeamError(
            f"HEAD or {preview.branch} changed since the preview: nothing was merged; run "
            "/team merge again to see what it would do now"
        )
    if now.commits == 0:
        raise TeamError(f"{preview.branch} has no commits that this branch lacks")
    done = git(
        repo, "merge", "--no-ff", "--no-edit", "-m", f"Merge branch '{preview.branch}'",
        preview.tip, ok=ANY_STATUS,
    )  # fmt: skip
    if done.returncode != 0:
        if (repo / git(repo, "rev-parse", "--git-path", "MERGE_HEAD").stdout.strip()).exists():
            git(repo, "merge", "--abort", ok=(0, 128))
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise TeamError(f"git merge failed, nothing was merged: {' '.join(said[-3:])}")
    return git(repo, "log", "-1", "--format=%h %s").stdout.strip()


def remove_worktree(repo: Path, path: Path, *, force: bool) -> None:
    """Remove a worker's worktree (its branch stays); ``force``: with its changes."""
    args = ["worktree", "remove", *(["--force"] if force else []), "--", str(path)]
    git(repo, *args)
