"""Plan mode against more of what an attacker would try (tests/agent/test_plan_mode.py has
the first round): commands that write through read-looking names, a background job, a
job stopped, a writing tool loaded through load_tools. Nothing on disk changes (.git
included), no job starts or stops, the user is asked nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.agent.test_plan_mode import (
    Planning,
    pair,
    planning,
    root,
    short_dir,
    snapshot,
    tool_results,
)
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from zcoder.tools import CommandPolicy, Mode
from zcoder.tools import jobs as jobs_module

__all__ = ["pair", "planning", "root", "short_dir"]  # fixtures

SNEAKY = [
    "git -c core.pager='touch owned' log",
    "git -c core.fsmonitor='touch owned' status",
    "git diff --output=owned.txt",
    "git log --outp=owned.txt",
    "LESSOPEN='|touch owned' less alpha.txt",
    "less alpha.txt",
    "find . -fprint owned.txt",
    "find . -fls owned.txt",
    "awk 'BEGIN{system(\"touch owned\")}'",
    "sed -n 'w owned.txt' alpha.txt",
    "env X=1 touch owned",
    "X=1 ls",
    "echo owned | xargs touch",
    'python3 -c \'open("owned", "w")\'',
    "tar -xf alpha.tar",
    "sort alpha.txt -o owned.txt",
    "sort --outp=owned.txt alpha.txt",
    "cat alpha.txt | tee owned.txt",
    "echo owned > alpha.txt",
    "echo owned >| owned.txt",
    "echo owned &> owned.txt",
    "echo owned 2> owned.txt",
    "cat <<< owned",
    "cat alpha.txt $(touch owned)",
    "cat alpha.txt `touch owned`",
    "cat <(touch owned)",
    "cat *",
    "ls ./cat*",
    "./cat alpha.txt",
    "bin/ls",
    "uniq alpha.txt owned.txt",
    "git branch owned",
    "git stash",
    "git checkout -- alpha.txt",
    "ls & touch owned",
    "(touch owned)",
    "ls\ntouch owned",
    "cd .git && ls; touch owned",
]


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[jobs_module.JobTable]:
    """A job table of this test's own, every job ended after it."""
    (tmp_path / "jobs").mkdir()
    table = jobs_module.JobTable(tmp_path / "jobs")
    monkeypatch.setattr(jobs_module, "_TABLE", table)
    yield table
    for job in table.jobs():
        if job.running:
            table.stop(job.number)


@pytest.mark.parametrize("policy", [CommandPolicy.ASK, CommandPolicy.ALLOW])
async def test_commands_that_write_through_read_looking_names_change_nothing(
    fake: FakeOllama, planning: Callable[[CommandPolicy], Planning], policy: CommandPolicy
) -> None:
    world = planning(policy)
    workspace = world.harness.workspace
    (workspace / "cat").symlink_to("/usr/bin/touch")
    (workspace / "bin").mkdir()
    (workspace / "bin" / "ls").symlink_to("/usr/bin/touch")
    world.before = snapshot(workspace)
    fake.enqueue(
        Turn.tool_calls(*(call("run_command", {"command": line}) for line in SNEAKY)),
        Turn.text("1. nothing"),
    )
    await world.harness.agent.run_user_turn("look around")
    assert snapshot(workspace) == world.before
    assert not (workspace / "owned").exists() and not (workspace / "owned.txt").exists()
    assert world.harness.approver.requests == []
    results = tool_results(world.harness.bodies()[1])
    assert len(results) == len(SNEAKY)
    refused = [r for r in results if r.startswith("Error:") and "plan mode" in r]
    assert refused == results


@pytest.fixture
def under_yes(planning: Callable[[CommandPolicy], Planning]) -> Planning:
    """Plan mode under --yes: a read-only command runs unasked."""
    return planning(CommandPolicy.ALLOW)


async def test_a_background_command_is_refused_in_plan_mode_even_a_read_only_one(
    fake: FakeOllama, under_yes: Planning, table: jobs_module.JobTable
) -> None:
    world = under_yes
    fake.enqueue(
        Turn.tool_calls(
            call("run_command", {"command": "tail -f alpha.txt", "background": True}),
            call("run_command", {"command": "cat /dev/zero", "background": True}),
        ),
        Turn.text("1. nothing"),
    )
    await world.harness.agent.run_user_turn("watch alpha")
    assert table.jobs() == []
    results = tool_results(world.harness.bodies()[1])
    assert len(results) == 2
    assert all(r.startswith("Error:") and "plan mode" in r for r in results), results
    assert snapshot(world.harness.workspace) == world.before


async def test_a_job_started_before_plan_mode_is_not_stopped_by_the_model_in_it(
    fake: FakeOllama, under_yes: Planning, table: jobs_module.JobTable
) -> None:
    world = under_yes
    job = table.start("sleep 60", world.harness.workspace)
    fake.enqueue(
        Turn.tool_calls(call("load_tools", {"name": "stop_job"})),
        Turn.tool_calls(call("stop_job", {"job": job.number})),
        Turn.text("1. nothing"),
    )
    await world.harness.agent.run_user_turn("stop the job")
    assert job.running
    (stopped,) = tool_results(world.harness.bodies()[2])[-1:]
    assert stopped.startswith("Error:") and "plan mode" in stopped


async def test_loading_a_writing_tool_in_plan_mode_does_not_make_it_callable(
    fake: FakeOllama, planning: Callable[[CommandPolicy], Planning]
) -> None:
    world = planning(CommandPolicy.ALLOW)
    fake.enqueue(
        Turn.tool_calls(call("load_tools", {"name": "write_file"})),
        Turn.tool_calls(call("write_file", {"path": "alpha.txt", "content": "owned\n"})),
        Turn.text("1. nothing"),
    )
    await world.harness.agent.run_user_turn("write")
    assert snapshot(world.harness.workspace) == world.before
    assert "write_file" not in {t["function"]["name"] for t in world.harness.bodies()[2]["tools"]}
    assert world.harness.agent.approval.mode is Mode.PLAN


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


async def test_git_in_plan_mode_runs_no_program_a_repository_in_the_workspace_names(
    fake: FakeOllama, planning: Callable[[CommandPolicy], Planning], tmp_path: Path
) -> None:
    """A bare repository's files, committed in a project (fixtures/evil: HEAD, config,
    objects), make git found it from a cwd inside it; its config names a textconv program
    that git show, git log -p and git blame run. Plan mode's git uses no repository it was
    not told of (safe.bareRepository=explicit) and takes no optional lock (git status
    rewrote a stale .git/index)."""
    world = planning(CommandPolicy.ALLOW)
    workspace = world.harness.workspace
    shutil.rmtree(workspace / ".git")
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "first")
    evil = workspace / "fixtures" / "evil"
    git(workspace, "init", "-q", "--bare", str(evil))
    git(workspace, "push", "-q", str(evil), "HEAD:refs/heads/main")
    git(evil, "symbolic-ref", "HEAD", "refs/heads/main")
    owned = tmp_path / "owned"
    git(evil, "config", "diff.x.textconv", f"touch {owned}; cat")
    (evil / "info").mkdir(exist_ok=True)
    (evil / "info" / "attributes").write_text("* diff=x\n")
    os.utime(workspace / "alpha.txt", (1, 1))  # stale stat data: git status would refresh it
    world.before = snapshot(workspace)
    here = {"cwd": "fixtures/evil"}
    fake.enqueue(
        Turn.tool_calls(
            call("run_command", {"command": "git show HEAD", **here}),
            call("run_command", {"command": "git log -p", **here}),
            call("run_command", {"command": "cd fixtures/evil && git show HEAD"}),
            call("run_command", {"command": "git status"}),
        ),
        Turn.text("1. nothing"),
    )
    await world.harness.agent.run_user_turn("look at the history")
    assert not owned.exists()
    assert snapshot(workspace) == world.before
