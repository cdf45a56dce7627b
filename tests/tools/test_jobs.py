"""Background commands (tools/jobs.py, tools/job_tools.py): started by run_command with
``background``, asked as such, read and stopped by the model, bounded on disk, and ended
with everything they started, escapees included, however zcoder ends.

Real processes throughout; waits have deadlines, never sleeps."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import wait_until
from tests.fixtures.approver import ALWAYS, DENY, ONCE, RELAY, USER, ScriptedApprover
from tests.tools.conftest import MakeCtx
from zcoder.tools import ApprovalPolicy, CommandPolicy, Profile, TurnOrigin, default_registry
from zcoder.tools.jobs import MAX_ENDED_JOBS, MAX_JOBS, Job, JobLog, job_table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_jobs_left() -> Iterator[None]:
    yield
    job_table().end_all(grace=0.5)


def tagged_alive(marker: str) -> list[int]:
    """Live processes of this user whose environment holds ``marker`` (KEY=VALUE)."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


async def test_a_background_command_is_asked_as_such_and_runs_past_the_call(
    make_ctx: MakeCtx,
) -> None:
    approver = ScriptedApprover(ONCE)
    ctx = make_ctx(policy=CommandPolicy.ASK, approver=approver)
    registry = default_registry()
    command = "echo started; while true; do echo tick; sleep 0.05; done"
    result = await registry.dispatch("run_command", {"command": command, "background": True}, ctx)
    assert result.ok, result.output
    (request,) = approver.requests
    assert request.background and request.allow_always is False
    number = result.metadata["job"]
    assert f"started in the background as job {number}" in result.output
    assert "started" in result.output and f"[job {number}: running]" in result.output
    job = job_table().get(number)
    assert job.running

    # job_output gives what is new since the last read, then stop_job ends it.
    wait_until(lambda: job.log.total > job.read_at + 20, what="more output")
    more = await registry.dispatch("job_output", {"job": number}, ctx)
    assert "tick" in more.output and "started" not in more.output
    stopped = await registry.dispatch("stop_job", {"job": number}, ctx)
    assert stopped.ok and f"[job {number}: killed]" in stopped.output
    assert job.state == "killed"  # not running


async def test_an_a_for_foreground_commands_does_not_cover_a_background_one(
    make_ctx: MakeCtx,
) -> None:
    approver = ScriptedApprover(ALWAYS, ONCE)
    approval = ApprovalPolicy(CommandPolicy.ASK, Profile.CODING)
    ctx = make_ctx(approver=approver, approval=approval)
    registry = default_registry()
    assert (await registry.dispatch("run_command", {"command": "true"}, ctx)).ok
    assert approval.always_granted
    await registry.dispatch("run_command", {"command": "true"}, ctx)  # unasked now
    assert len(approver.requests) == 1
    started = await registry.dispatch(
        "run_command", {"command": "sleep 30", "background": True}, ctx
    )
    assert started.ok
    assert len(approver.requests) == 2 and approver.requests[1].background


@pytest.mark.parametrize("origin", [USER, RELAY])
async def test_a_denied_background_command_starts_nothing(
    make_ctx: MakeCtx, origin: TurnOrigin
) -> None:
    approver = ScriptedApprover(DENY)
    ctx = make_ctx(policy=CommandPolicy.ASK, approver=approver, origin=origin)
    before = len(job_table().jobs())
    result = await default_registry().dispatch(
        "run_command", {"command": "touch ran", "background": True}, ctx
    )
    assert not result.ok and "denied" in result.output
    assert len(job_table().jobs()) == before
    assert not (ctx.workspace / "ran").exists()


async def test_a_command_that_fails_at_once_says_so(make_ctx: MakeCtx) -> None:
    result = await default_registry().dispatch(
        "run_command", {"command": "echo no such thing; exit 3", "background": True}, make_ctx()
    )
    assert not result.ok
    assert "no such thing" in result.output and "exited 3]" in result.output


async def test_stopping_a_job_ends_the_processes_that_left_its_group(
    make_ctx: MakeCtx, tmp_path: Path
) -> None:
    marker = f"JOBS_TEST_MARK={os.getpid()}-{tmp_path.name}"
    pf = tmp_path / "pid"
    command = (
        f"export {marker}; setsid sh -c 'echo $$ > {pf}; exec sleep 600' & "
        "( setsid sleep 600 & ) ; while true; do sleep 1; done"
    )
    result = await default_registry().dispatch(
        "run_command", {"command": command, "background": True}, make_ctx()
    )
    number = result.metadata["job"]
    wait_until(lambda: pf.exists() and pf.read_text().strip(), what="the escapee")
    wait_until(lambda: len(tagged_alive(marker)) >= 3, what="the job's processes")
    job_table().stop(number)
    wait_until(lambda: tagged_alive(marker) == [], timeout=10, what="every process to end")


def test_the_log_is_bounded_and_says_what_was_dropped(tmp_path: Path) -> None:
    log = JobLog(tmp_path / "job.log", cap=1000)
    for n in range(200):
        log.append(f"line {n:04d}\n".encode())
    assert log.path.stat().st_size <= 1000 + 40
    assert log.path.read_text().startswith(f"({log.dropped} bytes dropped)\n")
    text, end = log.read(0, 10_000)
    assert text.startswith(f"({log.dropped} bytes dropped)\n")
    assert text.rstrip().endswith("line 0199") and end == log.total == 2000
    assert "line 0000" not in text
    tail, _ = log.read(end - 10, 10_000)
    assert tail == "line 0199\n"  # a read since the last one: only what is new
    capped, _ = log.read(0, 20)
    assert capped.endswith("line 0199\n") and "bytes dropped" in capped


async def test_more_than_max_jobs_is_refused_clearly(make_ctx: MakeCtx) -> None:
    registry = default_registry()
    for _ in range(MAX_JOBS):
        await registry.dispatch(
            "run_command", {"command": "sleep 60", "background": True}, make_ctx()
        )
    refused = await registry.dispatch(
        "run_command", {"command": "sleep 60", "background": True}, make_ctx()
    )
    assert not refused.ok and "stop one first" in refused.output


async def test_an_unknown_job_is_a_clear_error(make_ctx: MakeCtx) -> None:
    result = await default_registry().dispatch("job_output", {"job": 999}, make_ctx())
    assert not result.ok and "no job 999" in result.output


CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from pathlib import Path
    os.environ["JOBS_TEST_MARK"] = sys.argv[2]
    from zcoder.tools.jobs import job_table
    job = job_table().start(
        "setsid sleep 600 & (setsid sleep 600 &); while true; do sleep 1; done", Path(".")
    )
    while not job.log.path.exists():
        time.sleep(0.01)
    print("ready", flush=True)
    sys.stdin.readline()  # the test has seen the job's processes (SIGTERM comes meanwhile)
    if sys.argv[1] == "crash":
        raise RuntimeError("a crash")
    """
)


@pytest.mark.parametrize("how", ["exit", "crash", "sigterm"])
def test_every_job_ends_when_zcoder_does(tmp_path: Path, how: str) -> None:
    mark = f"{os.getpid()}-{how}-{tmp_path.name}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(tmp_path)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, how, mark],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        wait_until(lambda: len(tagged_alive(f"JOBS_TEST_MARK={mark}")) >= 3, what="the job")
        if how == "sigterm":
            child.send_signal(signal.SIGTERM)
        else:
            child.communicate(b"go\n", timeout=30)
        child.wait(timeout=30)
        assert child.returncode == {"exit": 0, "crash": 1, "sigterm": -signal.SIGTERM}[how]
        wait_until(
            lambda: tagged_alive(f"JOBS_TEST_MARK={mark}") == [],
            timeout=10,
            what="every process of the job to end",
        )
        assert not list(tmp_path.glob("zcoder-jobs-*"))  # the logs went with them
    finally:
        child.kill()
        child.wait()


def ended(job: Job) -> bool:
    return not job.running


async def test_old_ended_jobs_are_forgotten_with_their_logs(make_ctx: MakeCtx) -> None:
    registry = default_registry()
    logs = []
    for _ in range(MAX_ENDED_JOBS + 3):
        result = await registry.dispatch(
            "run_command", {"command": "echo done", "background": True}, make_ctx()
        )
        job = job_table().get(result.metadata["job"])
        wait_until(functools.partial(ended, job), what="the job to end")
        logs.append(job.log.path)
    kept = [job for job in job_table().jobs() if not job.running]
    assert len(kept) <= MAX_ENDED_JOBS + 1  # the newest is forgotten on the next start
    assert not logs[0].exists() and logs[-1].exists()


async def test_a_model_cannot_slip_a_background_command_past_the_question(
    make_ctx: MakeCtx,
) -> None:
    """A relayed turn after the user's `a`, and a background flag written as a string: both
    are asked about or refused; nothing starts unasked."""
    approval = ApprovalPolicy(CommandPolicy.ASK, Profile.CODING)
    registry = default_registry()
    user = make_ctx(approver=ScriptedApprover(ALWAYS), approval=approval)
    assert (await registry.dispatch("run_command", {"command": "true"}, user)).ok
    approver = ScriptedApprover(DENY)
    relayed = make_ctx(approver=approver, approval=approval, origin=RELAY)
    before = len(job_table().jobs())
    denied = await registry.dispatch(
        "run_command", {"command": "sleep 60", "background": True}, relayed
    )
    assert not denied.ok and approver.requests[0].background
    as_text = await registry.dispatch(
        "run_command", {"command": "sleep 60", "background": "yes"}, user
    )
    assert not as_text.ok
    assert len(job_table().jobs()) == before
