"""/jobs and the header's count of running background commands (tools/jobs.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial

from rich.console import Group, RenderableType
from rich.padding import Padding

from zcoder.base.errors import UsageError
from zcoder.slash.declared import JobCommands
from zcoder.tools.jobs import TAIL_INDENT, JobError, job_table
from zcoder.tui.parts.services import Part
from zcoder.tui.widgets.entries import Entry, system_text

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
            listing = job_table().listing()
            entry = Entry("system", system_text(listing))
            entry.update(_hanging(listing))
            self.say.show(entry)
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


def _hanging(listing: str) -> Group:
    """The listing with each job's last lines wrapped under themselves, not under the
    job's line (at 60 columns the rest of an output line read as a line of its own)."""
    rows: list[RenderableType] = []
    for line in listing.split("\n"):
        if line.startswith(TAIL_INDENT):
            tail = system_text(line.removeprefix(TAIL_INDENT))
            rows.append(Padding(tail, (0, 0, 0, len(TAIL_INDENT))))
        else:
            rows.append(system_text(line))
    return Group(*rows)


def _job_number(text: str) -> int:
    value = text.strip()
    if not value.isdigit() or int(value) < 1:
        raise JobError(f"/jobs stop needs a job number (got {value!r}); /jobs lists them")
    return int(value)
