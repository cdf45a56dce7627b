"""The steps of ``/spawn NAME TASK`` (and the model's ``spawn_agent``) that are not the
screen's: the plan (name, branch, worktree, directory), the worker's command line, what
to type by hand outside tmux, the worktree and window started, the worker seen ready.

Each step blocks (git, tmux, the registry): the front end runs them off its event loop.
The confirmation, sending the task and showing the receipt are the front end's; waiting
for the worker (``wait_ready``) is a coroutine, so a front end that quits ends it.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from zcoder.base.sanitize import visible
from zcoder.relay import DiscoveryResult, Peer, check_name
from zcoder.team.git import (
    TeamError,
    add_worktree,
    branch_exists,
    branch_for,
    current_branch,
    repo_root,
    worktrees_dir,
)
from zcoder.team.roster import Roster, Worker
from zcoder.team.window import launch_file, new_window

READY_TIMEOUT: Final = 90.0  # a worker's relay must be ready within this (a model may load)
READY_POLL_SECONDS: Final = 0.2


@dataclass(frozen=True)
class WorkerFlags:
    """The lead's command-line choices a worker starts with: the model and where it is
    served, the profile, the permission mode the lead is in, a context window the user
    set with the flag, thinking turned off, commands refused. Never ``--yes``: a worker's
    approvals are its own (what the environment chose, the worker inherits with it)."""

    model: str
    backend: str = "ollama"
    host: str = ""
    base_url: str = ""
    gguf: str = ""
    profile: str = "coding"
    mode: str = "ask"
    context_window: int | None = None
    no_think: bool = False
    deny_commands: bool = False

    def flags(self) -> list[str]:
        """The whole set: the model's, then the lead's choices."""
        out = ["--model", self.model]
        if self.gguf:
            out += ["--gguf", self.gguf]
        elif self.backend == "openai":
            out += ["--backend", "openai", "--base-url", self.base_url]
        elif self.host:
            out += ["--host", self.host]
        return out + self.choices()

    def choices(self) -> list[str]:
        """The lead's choices beyond the model (none for a plain start)."""
        out: list[str] = []
        if self.profile != "coding":
            out += ["--profile", self.profile]
        if self.mode != "ask":
            out += ["--mode", self.mode]
        if self.context_window is not None:
            out += ["--context-window", str(self.context_window)]
        if self.no_think:
            out.append("--no-think")
        if self.deny_commands:
            out.append("--deny-commands")
        return out


@dataclass(frozen=True)
class SpawnOutcome:
    """What a spawn came to: ``started`` with the worker running and its task sent."""

    started: bool
    text: str
    by_hand: bool = False  # outside tmux: the text says how to start it by hand


@dataclass(frozen=True)
class SpawnPlan:
    """Where a worker will work: checked, nothing made yet."""

    name: str
    task: str
    repo: Path
    branch: str
    base: str
    worktree: Path
    workdir: Path  # the worktree, or the lead's subdirectory of the repository in it

    def worker(self) -> Worker:
        return Worker(
            self.name, self.branch, str(self.worktree), str(self.workdir), self.base,
            spawned_at=time.time(),
        )  # fmt: skip


def split_arguments(argument: str) -> tuple[str, str]:
    """``NAME TASK`` → (NAME, TASK); TeamError when either is missing."""
    name, _, task = argument.strip().partition(" ")
    if not name or not task.strip():
        raise TeamError("usage: /spawn NAME TASK (NAME: letters, digits, _ . -)")
    return name, task.strip()


def plan_spawn(workspace: Path, name: str, task: str, roster_home: Path) -> SpawnPlan:
    """The plan for worker ``name``: a usable relay name and git branch, in a repository
    whose HEAD is a branch, with no branch, worktree or worker of that name yet."""
    name = check_name(name)
    if not task.strip():
        raise TeamError("the task is empty: say what the worker should do")
    repo = repo_root(workspace)
    branch = branch_for(repo, name)
    base = current_branch(repo)
    if Roster(roster_home, repo).find(name) is not None:
        raise TeamError(
            f"a worker named {name} is on the team already (/team lists it; /team stop "
            f"{name} remove takes it off)"
        )
    if branch_exists(repo, branch):
        raise TeamError(f"the branch {branch} exists already: choose another name")
    worktree = worktrees_dir(repo) / name
    if worktree.exists() or worktree.is_symlink():
        raise TeamError(f"{worktree} exists already: choose another name, or remove it first")
    inside = Path(workspace).resolve().relative_to(repo.resolve())
    return SpawnPlan(name, task.strip(), repo, branch, base, worktree, worktree / inside)


def worker_argv(plan: SpawnPlan, flags: WorkerFlags) -> list[str]:
    """The worker's command line: this Python's zcoder, named, with the lead's flags."""
    return [sys.executable, "-m", "zcoder", "--name", plan.name, *flags.flags()]


def by_hand(plan: SpawnPlan, flags: WorkerFlags) -> str:
    """Outside tmux: the commands that start the worker and hand it its task."""
    commands = [
        f"git -C {shlex.quote(str(plan.repo))} worktree add -b {shlex.quote(plan.branch)} "
        f"{shlex.quote(str(plan.worktree))} HEAD",
        f"cd {shlex.quote(str(plan.workdir))} && zcoder --name {shlex.quote(plan.name)} "
        + " ".join(shlex.quote(flag) for flag in flags.flags()),
        f"zcoder send {shlex.quote(plan.name)} {shlex.quote(plan.task)}",
    ]
    return (
        f"/spawn starts workers in tmux windows, and this zcoder does not run in tmux. To "
        f"start {plan.name} by hand, run in another terminal:\n\n"
        + "\n".join(f"  {visible(line)}" for line in commands)
        + "\n\n(the last one here, once the worker runs)"
    )


def start_worker(plan: SpawnPlan, flags: WorkerFlags, home: Path, env: Mapping[str, str]) -> Worker:
    """The worktree on its branch, then the window running the worker; on the roster."""
    add_worktree(plan.repo, plan.branch, plan.worktree)
    worker = plan.worker()
    roster = Roster(home, plan.repo)
    roster.put(worker)
    launch = launch_file(home, plan.name, worker_argv(plan, flags), plan.workdir)
    try:
        worker.window, worker.pid = new_window(plan.name, plan.workdir, launch, env)
    except TeamError:
        launch.unlink(missing_ok=True)
        raise
    roster.put(worker)
    return worker


async def wait_ready(
    discover: Callable[[], DiscoveryResult],
    pid: int,
    alive: Callable[[], bool],
    *,
    timeout: float = READY_TIMEOUT,
) -> Peer:
    """The worker's peer once its relay is ready (its manifest published, its listener
    answering a ping: discovery lists only those), found by its process id. Each look is
    made in a thread; cancelling the waiting task (the app quitting) ends the wait."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        found = await asyncio.to_thread(discover)
        peer = next((p for p in found.peers if p.pid == pid), None)
        if peer is not None:
            return peer
        if not alive():
            raise TeamError("the worker exited before its relay was ready (see its window)")
        if loop.time() > deadline:
            raise TeamError(f"the worker's relay was not ready within {timeout:g} s")
        await asyncio.sleep(READY_POLL_SECONDS)
