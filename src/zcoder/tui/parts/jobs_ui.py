"""/jobs and the header's count of running background commands (tools/jobs.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial

from zcoder.base.errors import UsageError
from zcoder.slash.declared import JobCommands
from zcoder.tools.jobs import JobError, job_table
from zcoder.tui.parts.services import Part

__all__ = ["JobsUI"]

USAGE = "usage: /jobs, or /jobs stop N"


@dataclass(eq=False)
class JobsUI(Part, JobCommands):
    """/jobs lists this process's background jobs; /jobs stop N ends one (off the loop:
    a stop waits for the job's group up to its grace period). ``poll`` keeps the header's
    count of running jobs."""

    def jobs_command(self, argument: str, /) -> None:
        action, _, value = argument.strip().partition(" ")
        if action == "":
            self.say.notice(job_table().listing())
        elif action == "stop":
            try:
                number = _job_number(value)
                job_table().get(number)
            except UsageError as exc:
                self.say.error(str(exc))
                return
            self.host.run_later(partial(self._stop, number), group="jobs")
        else:
            self.say.error(USAGE)

    async def _stop(self, number: int) -> None:
        try:
            job = await asyncio.to_thread(job_table().stop, number)
        except JobError as exc:
            self.say.error(str(exc))
            return
        self.say.notice(f"Stopped job {number}: {job.state}.")
        self.poll()

    def poll(self) -> None:
        """The header's count of running jobs (a same value draws nothing)."""
        self.say.header(jobs=job_table().running())


def _job_number(text: str) -> int:
    value = text.strip()
    if not value.isdigit() or int(value) < 1:
        raise JobError(f"/jobs stop needs a job number (got {value!r}); /jobs lists them")
    return int(value)
