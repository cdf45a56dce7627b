"""Background commands: run_command with ``background`` keeps a command running as a job.

A job is ``bash -c`` in its own session (so its own process group), stdin closed, its
output (stdout and stderr) copied by a thread of its own to a log file in a private
directory made for this process (mode 0700, under ``$XDG_RUNTIME_DIR``, else ``$TMPDIR``).
The file is bounded: past ``MAX_LOG_BYTES`` its older half is dropped and it starts with
``(N bytes dropped)``. A job is *running* while its shell runs or anything it started
still holds its output open, then *exited N*, or *killed* (stopped, or ended by a signal).

Every job's processes carry a tag in their environment (tools/escapees.py), so those that
left the group (``setsid``, a double fork) are found and ended with it. All jobs end when
zcoder does: ``end_all`` runs at exit (``atexit``: a normal end, an uncaught exception, the
TUI's quit, Ctrl+C twice), from the TUI's stop and forced-exit cleanup (SIGTERM, SIGHUP),
and on a SIGTERM in a front end that left SIGTERM's default in place (``--prompt``).

One table per process (``job_table()``): the TUI's /jobs, the header's count and the
model's job tools read the same jobs.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Final

from zcoder.base.errors import UsageError
from zcoder.tools.escapees import (
    TAG_VARIABLE,
    become_subreaper,
    end_tagged,
    group_alive,
    new_tag,
)

__all__ = [
    "COMMAND_ENVIRONMENT",
    "MAX_JOBS",
    "MAX_LOG_BYTES",
    "TAIL_INDENT",
    "Job",
    "JobError",
    "JobLog",
    "JobTable",
    "job_table",
]

TAIL_INDENT: Final = "    "
"""How a job's last lines stand under its line in /jobs."""
MAX_LOG_BYTES: Final = 1 << 20
"""The most of a job's output kept on disk; past it the older half is dropped."""
MAX_JOBS: Final = 8
"""Jobs that may run at once; a ninth is refused until one is stopped or ends."""
MAX_ENDED_JOBS: Final = 16
"""Ended jobs kept (for /jobs and a last read); an older one goes, with its log file."""
STOP_GRACE_SECONDS: Final = 2.0
"""How long a job's group gets between SIGTERM and SIGKILL."""
_POLL_SECONDS: Final = 0.02
_CHUNK: Final = 65536
COMMAND_ENVIRONMENT: Final = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "TERM": "dumb",
    # Python writes to a pipe in blocks; unbuffered, its output shows as it is printed.
    "PYTHONUNBUFFERED": "1",
}
"""Set for every command zcoder runs, in the foreground (tools/command.py) or not."""


class JobError(UsageError):
    """A job that does not exist, or one too many."""


class JobLog:
    """A job's output on disk: bytes ``[dropped, total)`` of it, after a marker line when
    any were dropped. Appended by the job's reader thread, read by anyone."""

    def __init__(self, path: Path, cap: int = MAX_LOG_BYTES) -> None:
        self.path = path
        self.cap = cap
        self.total = 0  # bytes the job wrote
        self.dropped = 0  # of them, no longer on disk
        self._marker = 0  # length of the marker line at the file's start
        self._lock = threading.Lock()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)

    def append(self, data: bytes) -> None:
        with self._lock:
            with self.path.open("ab") as out:
                out.write(data)
            self.total += len(data)
            if self.total - self.dropped > self.cap:
                self._drop_older_half()

    def _drop_older_half(self) -> None:
        keep = self.cap // 2
        with self.path.open("rb") as old:
            old.seek(-keep, os.SEEK_END)
            tail = old.read()
        self.dropped = self.total - len(tail)
        marker = f"({self.dropped} bytes dropped)\n".encode()
        fresh = self.path.with_suffix(".new")
        fresh.write_bytes(marker + tail)
        fresh.replace(self.path)
        self._marker = len(marker)

    def read(self, since: int, limit: int) -> tuple[str, int]:
        """The output after byte ``since`` (at most its last ``limit`` bytes, saying how
        many were skipped) and where this read ended."""
        with self._lock:
            start = max(since, self.dropped)
            with self.path.open("rb") as log:
                log.seek(self._marker + start - self.dropped)
                data = log.read()
            end = self.total
        skipped = start - since
        if len(data) > limit:
            skipped += len(data) - limit
            data = data[-limit:]
        text = data.decode("utf-8", errors="replace")
        if skipped:
            text = f"({skipped} bytes dropped)\n{text}"
        return text, end

    def last_lines(self, count: int) -> list[str]:
        text, _ = self.read(max(0, self.total - 4096), 4096)
        return text.splitlines()[-count:]


@dataclass(eq=False)
class Job:
    """One background command."""

    number: int
    command: str
    cwd: Path
    process: subprocess.Popen[bytes]
    tag: str
    log: JobLog
    started: float = field(default_factory=time.monotonic)
    stopped: bool = False
    read_at: int = 0
    """Where the model's last read of the output ended (job_output)."""
    reader: threading.Thread | None = None

    @property
    def running(self) -> bool:
        reading = self.reader is not None and self.reader.is_alive()
        return not self.stopped and (self.process.poll() is None or reading)

    @property
    def state(self) -> str:
        """``running``, ``exited N`` or ``killed``."""
        if self.running:
            return "running"
        code = self.process.poll()
        if self.stopped or code is None or code < 0:
            return "killed"
        return f"exited {code}"

    def describe(self, lines: int = 3) -> str:
        """``[2] running  python -m http.server`` and its last lines, indented."""
        head = f"[{self.number}] {self.state}  {self.command}"
        tail = [f"{TAIL_INDENT}{line}" for line in self.log.last_lines(lines)]
        return "\n".join([head, *tail])


def _pump(fd: int, log: JobLog) -> None:
    """The job's reader thread: its output to its log until every writer closed it."""
    try:
        while chunk := os.read(fd, _CHUNK):
            log.append(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)


class JobTable:
    """This process's background jobs (one table: ``job_table()``)."""

    def __init__(self, base: Path | None = None) -> None:
        self._base = base
        self._dir: Path | None = None
        self._jobs: list[Job] = []
        self._next = 1
        self._lock = threading.Lock()
        self._hooked = False
        self.on_change: Callable[[], None] | None = None
        """Called (from any thread) when a job starts or is stopped."""

    def jobs(self) -> list[Job]:
        return list(self._jobs)

    def running(self) -> int:
        return sum(1 for job in self._jobs if job.running)

    def get(self, number: int) -> Job:
        for job in self._jobs:
            if job.number == number:
                return job
        raise JobError(f"there is no job {number} (/jobs lists them)")

    def listing(self) -> str:
        """What /jobs shows: every job, its state and last lines."""
        if not self._jobs:
            return "No background jobs."
        return "\n".join(job.describe() for job in self._jobs)

    def start(self, command: str, cwd: Path) -> Job:
        """Start ``command`` as a job; JobError when MAX_JOBS already run, OSError when
        bash cannot start."""
        with self._lock:
            if self.running() >= MAX_JOBS:
                raise JobError(f"{MAX_JOBS} background jobs are running already; stop one first")
            number, self._next = self._next, self._next + 1
            directory = self._directory()
        self._hook_exit()
        become_subreaper()
        tag = new_tag()
        log = JobLog(directory / f"job-{number}.log")
        read_fd, write_fd = os.pipe()
        try:
            process = subprocess.Popen(
                ["bash", "-c", command],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
                env={**os.environ, **COMMAND_ENVIRONMENT, TAG_VARIABLE: tag},
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        job = Job(number, command, cwd, process, tag, log)
        job.reader = threading.Thread(
            target=_pump, args=(read_fd, log), name=f"zcoder-job-{number}", daemon=True
        )
        job.reader.start()
        self._jobs.append(job)
        self._forget_ended()
        self._changed()
        return job

    def _forget_ended(self) -> None:
        """Past MAX_ENDED_JOBS ended jobs, the oldest go, and their logs."""
        ended = [job for job in self._jobs if not job.running]
        for job in ended[: max(0, len(ended) - MAX_ENDED_JOBS)]:
            self._jobs.remove(job)
            job.log.path.unlink(missing_ok=True)

    def stop(self, number: int, grace: float = STOP_GRACE_SECONDS) -> Job:
        """End job ``number``: its group (SIGTERM, then SIGKILL after ``grace``) and every
        process that left it. Blocks up to ``grace``: call it off the event loop."""
        job = self.get(number)
        self._end([job], grace)
        self._changed()
        return job

    def end_all(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """End every job (zcoder is leaving) and remove their logs. Takes no lock: it may
        run in a signal handler that interrupted this very table."""
        self._end(list(self._jobs), grace)
        directory, self._dir = self._dir, None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)

    def _end(self, jobs: list[Job], grace: float) -> None:
        for job in jobs:
            job.stopped = job.stopped or job.process.poll() is None or _group_left(job)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(job.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(group_alive(j.process.pid) for j in jobs):
            time.sleep(_POLL_SECONDS)
        for job in jobs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(job.process.pid, signal.SIGKILL)
            end_tagged(job.tag)
            with contextlib.suppress(subprocess.TimeoutExpired):
                job.process.wait(timeout=grace)

    def _changed(self) -> None:
        if self.on_change is not None:
            with contextlib.suppress(Exception):
                self.on_change()

    def _directory(self) -> Path:
        if self._dir is None:
            base = self._base or Path(
                os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
            )
            self._dir = Path(tempfile.mkdtemp(prefix=f"zcoder-jobs-{os.getpid()}-", dir=base))
        return self._dir

    def _hook_exit(self) -> None:
        """The first job: end them all at exit, and on a SIGTERM nobody else handles."""
        if self._hooked:
            return
        self._hooked = True
        atexit.register(self.end_all)
        if threading.current_thread() is threading.main_thread():
            with contextlib.suppress(ValueError, OSError):
                if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                    signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum: int, _frame: FrameType | None) -> None:
        self.end_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _group_left(job: Job) -> bool:
    """Whether the shell exited but something it started still runs (a stop kills it)."""
    return job.reader is not None and job.reader.is_alive()


_TABLE: JobTable | None = None


def job_table() -> JobTable:
    """This process's table of background jobs."""
    global _TABLE
    if _TABLE is None:
        _TABLE = JobTable()
    return _TABLE
