"""The model's side of background jobs (tools/jobs.py): read a job's new output, stop it.

Both are offered on demand (tools/catalog.py): they cost a line of the catalog until the
model starts a job and needs them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from zcoder.tools.base import (
    Offered,
    ToolContext,
    ToolHandler,
    ToolResult,
    ToolSpec,
    arguments,
)
from zcoder.tools.jobs import Job, JobError, job_table
from zcoder.tools.modes import Effects
from zcoder.tools.offload import to_completion

__all__ = [
    "FIRST_LOOK_SECONDS",
    "JOB_OUTPUT",
    "STOP_JOB",
    "job_status",
    "running_jobs_started_in",
    "start_job",
]

FIRST_LOOK_SECONDS: Final = 1.0
"""How long a started job is watched before run_command answers: a command that fails at
once (not found, a port in use) is reported as such, with its output."""

_LOOK_POLL_SECONDS: Final = 0.05
_STARTED: Final = "started in the background as job "
"""How run_command's answer for a job it started begins (the number follows)."""
_JOB: Final = {"job": {"type": "integer", "description": "job number", "minimum": 1}}


def job_status(job: Job, state: str | None = None) -> str:
    """The bracketed line a job's result ends with."""
    return f"[job {job.number}: {state or job.state}]"


async def start_job(command: str, cwd: Path, ctx: ToolContext, meta: dict[str, Any]) -> ToolResult:
    """run_command's ``background``, approved: the job started, and its first output."""
    table = job_table()
    try:
        job = await to_completion(ctx.stop, lambda: table.start(command, cwd), name="job")
    except JobError as exc:
        return ToolResult.error(str(exc), **meta)
    except OSError as exc:
        return ToolResult.error(f"could not start bash: {exc}", **meta)
    deadline = time.monotonic() + FIRST_LOOK_SECONDS
    while job.running and time.monotonic() < deadline:
        await asyncio.sleep(_LOOK_POLL_SECONDS)
    state = job.state
    text, job.read_at = job.log.read(0, ctx.max_output)
    body = text.rstrip() or "(no output yet)"
    ok = state in {"running", "exited 0"}
    note = f"{_STARTED}{job.number}"
    return ToolResult(ok, f"{note}\n{body}\n{job_status(job, state)}", {**meta, "job": job.number})


def running_jobs_started_in(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """The numbers of the jobs these messages' run_command calls started that still run
    in this process (a resumed session's numbers may name another process's jobs: only
    those this one has and that run are named)."""
    started = []
    for message in messages:
        content = str(message.get("content", "")) if message.get("role") == "tool" else ""
        number = content.removeprefix(_STARTED).split("\n", 1)[0]
        if content.startswith(_STARTED) and number.isdigit():
            started.append(int(number))
    running = {job.number for job in job_table().jobs() if job.running}
    return [number for number in started if number in running]


async def _job_output(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    try:
        job = job_table().get(args["job"])
    except JobError as exc:
        return ToolResult.error(str(exc))
    state = job.state  # before the read: a job that ended has all its output read
    text, job.read_at = job.log.read(job.read_at, ctx.max_output)
    body = text.rstrip() or "(no new output)"
    return ToolResult(True, f"{body}\n{job_status(job, state)}", {"job": job.number})


async def _stop_job(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    table = job_table()
    try:
        table.get(args["job"])
        # Up to the stop's grace period of waiting: off the loop, and run to its end.
        job = await to_completion(ctx.stop, lambda: table.stop(args["job"]), name="stop")
    except JobError as exc:
        return ToolResult.error(str(exc))
    return ToolResult(True, f"stopped\n{job_status(job)}", {"job": job.number})


def _job_tool(name: str, description: str, handler: ToolHandler, effects: Effects) -> ToolSpec:
    """A tool of one argument, the job's number, offered on demand."""
    parameters = arguments(dict(_JOB), required=["job"])
    return ToolSpec(
        name, description, parameters, handler, offered=Offered.ON_DEMAND, effects=effects
    )


JOB_OUTPUT = _job_tool("job_output", "New output of a background job.", _job_output, Effects.READS)
STOP_JOB = _job_tool("stop_job", "Stop a background job.", _stop_job, Effects.WRITES)
