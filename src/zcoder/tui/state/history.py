"""The prompts the user sent, kept per workspace across runs (Up, Down and Ctrl+R recall them).

One file per workspace: ``$ZCODER_HOME/history/<hash>.jsonl``, where the hash is of the
canonical workspace path (no path, no prompt in a file name). The directory is 0700, the
file 0600 and never followed through a link. Each prompt is one JSON line
(``{"ts": ..., "text": ...}``, ASCII only), so multi-line prompts and any character
round-trip exactly. Lines are appended with ``O_APPEND`` in one ``write``: two zcoders in
one workspace interleave whole lines. A corrupt line (a crash mid-write, an edit by hand)
is skipped.

What is kept: everything sent, prompts and slash commands alike, except blank text and a
prompt repeating the one just before it. A prompt longer than ``MAX_ENTRY_CHARS`` (a big
paste) is recalled in this run but never written to disk.

Bounds: the newest ``MAX_ENTRIES`` are loaded. When the file has grown past
``COMPACT_AT_LINES`` lines or ``COMPACT_AT_BYTES`` bytes it is rewritten with the newest
``MAX_ENTRIES`` (a private temporary file renamed over it). Compactions take an exclusive
``flock`` on ``<hash>.jsonl.lock``, appends a shared one, so an append never lands in a file
a compaction is about to replace and no line is lost.

A file that cannot be read or written (full disk, read-only home) costs the file, never
the session: this run's prompts are still recalled, the ones not yet saved are retried
with the next one, and the user gets one notice (``problem``), not one per prompt.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from zcoder.base.safefile import PRIVATE_FILE_MODE, ensure_private_dir
from zcoder.sessions.paths import canonical_workspace

HISTORY_DIR: Final = "history"
MAX_ENTRIES: Final = 1000
MAX_ENTRY_CHARS: Final = 16_000
COMPACT_AT_LINES: Final = MAX_ENTRIES + MAX_ENTRIES // 2
COMPACT_AT_BYTES: Final = 8 << 20
# Only the end of a file is read: a file grown far past its bound by something else costs
# at most this much at start-up.
MAX_READ_BYTES: Final = 2 * COMPACT_AT_BYTES
LOCK_WAIT_SECONDS: Final = 1.0

_OPEN_FLAGS: Final = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def history_path(home: Path, workspace: Path) -> Path:
    """The file holding ``workspace``'s prompts under ``home``."""
    digest = hashlib.sha256(canonical_workspace(workspace).encode("utf-8", "surrogatepass"))
    return home / HISTORY_DIR / f"{digest.hexdigest()[:32]}.jsonl"


def encode_entry(text: str, when: float) -> bytes:
    return (json.dumps({"ts": round(when, 3), "text": text}, ensure_ascii=True) + "\n").encode()


def decode_entry(line: bytes) -> str | None:
    """The prompt on one line, or None for a line that is not one of ours."""
    try:
        record = json.loads(line)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError both are
        return None
    if not isinstance(record, dict):
        return None
    text = record.get("text")
    return text if isinstance(text, str) and text.strip() else None


def storable(text: str) -> bool:
    return bool(text.strip()) and len(text) <= MAX_ENTRY_CHARS


class PromptHistory:
    """The prompts of one workspace: ``entries`` oldest first, ``add`` to record one."""

    def __init__(
        self,
        path: Path,
        *,
        max_entries: int = MAX_ENTRIES,
        compact_at_lines: int = COMPACT_AT_LINES,
        compact_at_bytes: int = COMPACT_AT_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.max_entries = max_entries
        self.compact_at_lines = max(compact_at_lines, max_entries + 1)  # else every add
        self.compact_at_bytes = compact_at_bytes
        self.clock = clock
        self.entries: list[str] = []
        self.problem: str | None = None  # the one notice for the user, once
        self._reported = False
        self._unsaved: list[bytes] = []
        self._file_lines = 0  # lines in the file as far as this process knows

    @classmethod
    def open(cls, home: Path, workspace: Path) -> PromptHistory:
        """The history of ``workspace``, loaded (a file that cannot be read gives an empty
        history and a ``problem``)."""
        history = cls(history_path(home, workspace))
        history.load()
        return history

    # -- reading ------------------------------------------------------------------------

    def load(self) -> None:
        try:
            lines = self._read_lines()
        except OSError as exc:
            self._fail("read", exc)
            return
        self._file_lines = len(lines)
        entries = [text for text in map(decode_entry, lines) if text is not None]
        self.entries = entries[-self.max_entries :]

    def _read_lines(self) -> list[bytes]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return []
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(self.path))
            size = os.fstat(fd).st_size
            if size > MAX_READ_BYTES:
                file.seek(size - MAX_READ_BYTES)
                file.readline()  # the rest of a line cut by the seek
            data = file.read()
        return [line for line in data.split(b"\n") if line.strip()]

    # -- recording ----------------------------------------------------------------------

    def add(self, text: str) -> str | None:
        """Record a prompt the user sent. Returns a notice for the user the first time the
        file cannot be written (later failures are silent; nothing is lost from this run)."""
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return None
        self.entries.append(text)
        del self.entries[: -self.max_entries]
        if not storable(text):
            return None
        self._unsaved.append(encode_entry(text, self.clock()))
        del self._unsaved[: -self.max_entries]
        try:
            size = self._append(b"".join(self._unsaved))
        except OSError as exc:
            return self._fail("write", exc)
        self._file_lines += len(self._unsaved)
        self._unsaved.clear()
        if self._file_lines > self.compact_at_lines or size > self.compact_at_bytes:
            # Skipped when it cannot be done now (say the lock is held): retried next time.
            with contextlib.suppress(OSError):
                self.compact()
        return None

    def _append(self, data: bytes) -> int:
        """Append ``data`` in one write; the file's size after it."""
        ensure_private_dir(self.path.parent)
        with self._open_current(fcntl.LOCK_SH) as fd:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                # A line cut by a full disk earlier: end it (it is skipped when read) so
                # the whole entries written again now start lines of their own.
                data = b"\n" + data
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, "no space left for the whole entry", str(self.path))
            return os.fstat(fd).st_size

    @property
    def lock_path(self) -> Path:
        """The file the locks are taken on. It is never replaced, so a lock on it is a lock
        on whichever history file is at ``path`` (a lock on the history file itself would
        be lost with the file when a compaction renames a new one over it)."""
        return self.path.with_name(self.path.name + ".lock")

    @contextlib.contextmanager
    def _locked(self, operation: int) -> Iterator[None]:
        """Hold ``operation`` (shared for appends, exclusive for compactions) on the lock
        file. A shared lock that cannot be had in ``LOCK_WAIT_SECONDS`` (a stuck process)
        is gone without: an append is still one whole line."""
        fd = os.open(self.lock_path, _OPEN_FLAGS | os.O_NONBLOCK, PRIVATE_FILE_MODE)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(self.lock_path))
            locked = _lock(fd, operation)
            try:
                yield
            finally:
                if locked:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _open_current(self, operation: int) -> Iterator[int]:
        """The history file, opened under ``operation`` on the lock file and made private."""
        with self._locked(operation):
            fd = os.open(self.path, _OPEN_FLAGS | os.O_NONBLOCK, PRIVATE_FILE_MODE)
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    raise OSError(errno.EINVAL, "not a regular file", str(self.path))
                if stat.S_IMODE(info.st_mode) != PRIVATE_FILE_MODE:
                    os.fchmod(fd, PRIVATE_FILE_MODE)
                yield fd
            finally:
                os.close(fd)

    def compact(self) -> None:
        """Rewrite the file with its newest ``max_entries`` prompts (atomically)."""
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with self._open_current(fcntl.LOCK_EX):
            lines = self._read_lines()
            kept = [line for line in lines if decode_entry(line) is not None]
            kept = kept[-self.max_entries :]
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                PRIVATE_FILE_MODE,
            )
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(b"".join(line + b"\n" for line in kept))
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        self._file_lines = len(kept)

    def _fail(self, doing: str, exc: OSError) -> str | None:
        if self._reported:
            return None
        self._reported = True
        reason = exc.strerror or str(exc)
        self.problem = (
            f"Prompt history: could not {doing} {self.path}: {reason}. This run's prompts "
            "are still recalled with Up and Ctrl+R; saving is retried with each prompt."
        )
        return self.problem


def _lock(fd: int, operation: int) -> bool:
    """``flock`` with a deadline: True when locked. A lock held too long (a stuck process)
    is given up on: an append is still whole without it."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                if operation == fcntl.LOCK_EX:
                    raise
                return False
            time.sleep(0.002)
