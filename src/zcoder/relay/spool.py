"""The process-private spool: inbox → processing → done, and rejected/ for quarantine.

Only the listener stores (``store``); only the foreground claims (``claim_one``, ``claim``)
and completes (``complete``). Files are written to ``tmp/`` and renamed into
``inbox/<9-digit sequence>-<message_id>.json``, so an accepted message is always whole.

No fsync: the design's guarantee ends with the receiver process (a machine crash may lose
accepted messages; so may the receiver's own crash before it claims them), and a rename is
atomic for every other process the moment it returns, crash of this one included. An
fsync would only buy durability across a machine crash, which the relay does not promise.

Creating a file is the slow part of a store on some file systems (a new inode: hundreds of
microseconds on a busy ext4). The foreground process keeps empty files ready in ``tmp/``
(``top_up_spares``), as many as the queue has places, and the store side picks them up, so
an acknowledgement waits only for a write and a rename. A spare is used only when it is
still an empty regular file of this user with one link, else the store creates its file.
Spares are never messages: ``tmp/`` is never read, and it goes with the spool.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import shutil
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Final

from zcoder.base.errors import ZcoderError
from zcoder.base.safefile import UnsafeFile, read_own_file
from zcoder.relay.held_shares import HeldShares
from zcoder.relay.protocol import (
    Envelope,
    EnvelopeError,
    FrameError,
    decode_flat_object,
    validate_envelope,
)

SPOOL_NAME_RE: Final = re.compile(r"(\d{9})-([A-Za-z0-9_.-]{1,100})\.json")
# held/: accepted messages that wait for the user to run or discard them (trust per peer).
SUBDIRS: Final = ("inbox", "processing", "held", "done", "rejected", "tmp")
# Done receipts (and the ids remembered for duplicate detection) are kept for sender retries,
# which happen within a sender's deadline (seconds): the newest 4,096, none over an hour old.
DONE_RECEIPTS_MAX: Final = 4096
DONE_RECEIPTS_MAX_AGE: Final = 3600.0
# Empty files kept ready for the next stores (see top_up_spares): at least this many, and
# as many as the queue has places (so a burst that fills the queue creates no file).
MIN_SPARE_FILES: Final = 8
SPARE_PREFIX: Final = "spare-"
_CREATE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class SpoolError(ZcoderError):
    """The spool could not store or move a message."""


@dataclass(frozen=True)
class ClaimedMessage:
    """A message moved to processing/, validated again, ready for one agent turn."""

    sequence: int
    envelope: Envelope
    path: Path


@dataclass(frozen=True)
class QuarantinedMessage:
    """A spool entry that was unsafe or invalid; moved to rejected/, never given to a model."""

    name: str
    reason: str


ClaimResult = ClaimedMessage | QuarantinedMessage


@dataclass(frozen=True)
class Sequences:
    """Where the queue stands, in acceptance sequences (``claim_one`` takes ``oldest_waiting``
    next): None when the inbox is empty; ``last_accepted`` is 0 before the first message."""

    oldest_waiting: int | None
    last_accepted: int


@dataclass(eq=False)
class Spool:
    root: Path
    instance_id: str
    max_bytes: int
    max_message_chars: int
    _: KW_ONLY
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._sequence = 0
        # Accepted message ids (for `duplicate`) and done markers, oldest first, with the
        # time each was added: both bounded by DONE_RECEIPTS_MAX and DONE_RECEIPTS_MAX_AGE.
        self._accepted: dict[str, float] = {}
        self._done: collections.deque[tuple[float, str]] = collections.deque()
        # Spool names this instance stored and has not yet completed or quarantined: the
        # queue length without a directory scan on every store (that scan made each
        # enqueue cost O(queue length)). The disk is re-counted before answering `full`.
        self._pending: set[str] = set()
        self._held = HeldShares()  # of those, the held ones, by sender (its quota)
        # Plain strings for the hot path: pathlib joins cost more than the syscalls here.
        self._tmp_dir = os.path.join(self.root, "tmp")
        self._inbox_dir = os.path.join(self.root, "inbox")
        self._held_dir = os.path.join(self.root, "held")
        self._spares: collections.deque[str] = collections.deque()  # picked up, unused
        self._spare_count = 0
        self._closing = False
        self._prepared: tuple[int, str] | None = None  # a spare opened ahead (prepare_next)
        self._written: int | None = None  # the last stored file, still open

    # -- set-up and teardown ------------------------------------------------------------

    def create(self) -> None:
        os.mkdir(self.root, 0o700)
        for name in SUBDIRS:
            os.mkdir(self.root / name, 0o700)

    def top_up_spares(self, count: int) -> int:
        """Make empty spare files in ``tmp/`` until there are ``count`` (at least
        MIN_SPARE_FILES); returns how many are there. The foreground process calls this
        (at start and after each store it is told of): a file's creation, slow on some
        file systems, never runs in the listener's process, let alone on its way to an ack."""
        wanted = max(MIN_SPARE_FILES, count)
        try:
            with os.scandir(self._tmp_dir) as entries:
                have = sum(1 for entry in entries if entry.name.startswith(SPARE_PREFIX))
        except OSError:
            return 0
        while have < wanted and not self._closing:
            self._spare_count += 1
            name = f"{SPARE_PREFIX}{os.getpid()}-{self._spare_count}"
            try:
                os.close(os.open(f"{self._tmp_dir}/{name}", _CREATE_FLAGS, 0o600))
            except FileExistsError:
                continue
            except OSError:
                break  # a full disk, a removed spool: stores create their own files
            have += 1
        return have

    def stop_spares(self) -> None:
        """No more spares are made (the spool is about to go)."""
        self._closing = True

    def prepare_next(self) -> None:
        """Ready the next store (the listener calls this after an accepted message's ack
        is written, while the sender reads it): the file just stored is closed and the
        next spare opened and checked, so neither is on the next message's way."""
        with self._lock:
            self._close_written()
            if self._prepared is None:
                self._prepared = self._open_spare()

    def _close_written(self) -> None:
        if self._written is not None:
            with contextlib.suppress(OSError):
                os.close(self._written)
            self._written = None

    def _pick_up_spares(self) -> None:
        """The spares in ``tmp/`` now (called by the store side with none left in hand:
        every one listed is unused, since only this side uses them)."""
        try:
            with os.scandir(self._tmp_dir) as entries:
                names = sorted(e.name for e in entries if e.name.startswith(SPARE_PREFIX))
        except OSError:
            return
        self._spares.extend(f"{self._tmp_dir}/{name}" for name in names)

    def _open_spare(self) -> tuple[int, str] | None:
        """A spare opened for writing, or None (none ready, or one that is not pristine)."""
        if not self._spares:
            self._pick_up_spares()
        try:
            path = self._spares.popleft()
        except IndexError:
            return None
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_size
            or info.st_nlink != 1
            or info.st_uid != os.geteuid()
        ):
            os.close(fd)
            return None
        return fd, path

    def remove(self) -> None:
        """Remove the whole private spool (only ever this instance's own directory)."""
        with contextlib.suppress(FileNotFoundError):
            st = os.lstat(self.root)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
                shutil.rmtree(self.root, ignore_errors=True)

    # -- listener side ------------------------------------------------------------------

    def is_duplicate(self, message_id: str) -> bool:
        with self._lock:
            return message_id in self._accepted

    def queued(self) -> int:
        """Accepted messages not yet completed (inbox + processing + held), counted on disk."""
        return sum(self.counts())

    def counts(self) -> tuple[int, int, int]:
        """Accepted messages not yet completed, by where they are, counted on disk: waiting
        to run (inbox), running (processing) and held for the user."""
        waiting, running, held = (len(self._names(sub)) for sub in ("inbox", "processing", "held"))
        return waiting, running, held

    def _names(self, sub: str) -> set[str]:
        try:
            with os.scandir(self.root / sub) as entries:
                return {entry.name for entry in entries if SPOOL_NAME_RE.fullmatch(entry.name)}
        except OSError:
            return set()

    def forget_pending(self, name: str) -> None:
        """An entry another process (the foreground) completed, discarded or quarantined:
        its queue slot is free."""
        with self._lock:
            self._pending.discard(name)
            self._held.discard(name)

    def _queue_length(self, max_queue: int) -> int:
        """The in-memory queue length; at the limit, confirmed against the directories.

        An entry removed behind the spool's back frees its slot here. Call with the lock held.
        """
        if len(self._pending) >= max_queue:
            self._pending &= self._names("inbox") | self._names("processing") | self._names("held")
        return len(self._pending)

    def store(
        self, envelope: Envelope, payload: bytes, max_queue: int, *, held: bool = False
    ) -> tuple[str, int]:
        """Decide duplicate/full and store atomically. Returns (status, queue position).

        Status is ``duplicate``, ``full`` or ``accepted``. Raises SpoolError when the
        message could not be stored whole; nothing half-written remains then, and
        HeldQuotaReached when a message to be ``held`` would give its sender (its pid, its
        ``sender_workspace``) more than its share of the queue (zcoder.relay.held_shares).
        """
        with self._lock:
            if envelope.message_id in self._accepted:
                return "duplicate", 0
            sender = (envelope.sender_pid, envelope.sender_workspace)
            if held:
                self._held.check(sender, max_queue, lambda: self._names("held"))
            queued = self._queue_length(max_queue)
            if queued >= max_queue:
                return "full", 0
            sequence = self._sequence + 1
            name = f"{sequence:09d}-{envelope.message_id}.json"
            final = f"{self._held_dir if held else self._inbox_dir}/{name}"
            self._close_written()
            spare, self._prepared = self._prepared or self._open_spare(), None
            temporary = f"{self._tmp_dir}/{name}" if spare is None else spare[1]
            try:
                fd = os.open(temporary, _CREATE_FLAGS, 0o600) if spare is None else spare[0]
                try:
                    view = memoryview(payload)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.rename(temporary, final)
                except BaseException:
                    os.close(fd)
                    raise
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise SpoolError(f"could not store message: {exc.strerror or exc}") from exc
            self._written = fd  # closed after the ack (prepare_next) or by the next store
            self._sequence = sequence
            now = self.clock()
            self._accepted[envelope.message_id] = now
            while self._accepted and (
                len(self._accepted) > DONE_RECEIPTS_MAX
                or next(iter(self._accepted.values())) < now - DONE_RECEIPTS_MAX_AGE
            ):
                del self._accepted[next(iter(self._accepted))]
            self._pending.add(name)
            if held:
                self._held.add(name, sender)
            return "accepted", queued + 1

    # -- foreground side ----------------------------------------------------------------

    def sequences(self) -> Sequences:
        """The oldest inbox entry's sequence (what ``claim_one`` takes next; an entry whose
        name is not a spool name counts as 0: it is taken, and quarantined, first) and the
        last sequence accepted."""
        with self._lock:
            last = self._sequence
        try:
            with os.scandir(self._inbox_dir) as entries:
                first = min((entry.name for entry in entries), default=None)
        except OSError:
            first = None
        if first is None:
            return Sequences(None, last)
        match = SPOOL_NAME_RE.fullmatch(first)
        return Sequences(int(match.group(1)) if match else 0, last)

    def claim_one(self) -> ClaimResult | None:
        """Move the oldest inbox entry to processing and validate it again (``claim``)."""
        while True:
            try:
                with os.scandir(self._inbox_dir) as entries:
                    names = sorted(entry.name for entry in entries)
            except OSError as exc:
                raise SpoolError(f"cannot read the relay inbox: {exc.strerror}") from exc
            if not names:
                return None
            claimed = self.claim(names[0])
            if claimed is not None:
                return claimed

    def claim(self, name: str) -> ClaimResult | None:
        """Move inbox entry ``name`` to processing and validate it again; None when another
        claimer won it (rename is atomic: exactly one caller wins each entry). Anything
        unsafe or invalid is moved to rejected/ and returned as a QuarantinedMessage."""
        target = self.root / "processing" / name
        try:
            os.rename(os.path.join(self._inbox_dir, name), target)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SpoolError(f"cannot claim {name}: {exc.strerror}") from exc
        try:
            return self._validate_claimed(name, target)
        except _Unsafe as exc:
            return self._quarantine(name, target, str(exc))

    def _validate_claimed(self, name: str, path: Path) -> ClaimedMessage:
        match = SPOOL_NAME_RE.fullmatch(name)
        if match is None:
            raise _Unsafe("the file name is not a spool name")
        try:
            data = read_own_file(path, self.max_bytes)
        except UnsafeFile as exc:
            raise _Unsafe(str(exc)) from None
        try:
            obj = decode_flat_object(data)
        except FrameError as exc:
            raise _Unsafe(f"it is not a flat JSON object ({exc})") from None
        if obj.get("type") != Envelope.TYPE or obj.get("protocol") != 1:
            raise _Unsafe("it is not a version-1 enqueue")
        try:
            envelope = validate_envelope(obj, self.max_message_chars, stored=True)
        except EnvelopeError as exc:
            raise _Unsafe(str(exc)) from None
        if envelope.target_instance_id != self.instance_id:
            raise _Unsafe("it is addressed to another instance")
        if envelope.message_id != match.group(2):
            raise _Unsafe("its message_id does not match its file name")
        return ClaimedMessage(sequence=int(match.group(1)), envelope=envelope, path=path)

    def _quarantine(self, name: str, path: Path, reason: str) -> QuarantinedMessage:
        # rename moves a symlink itself, never what it points at.
        with contextlib.suppress(OSError):
            os.rename(path, self.root / "rejected" / name)
        with self._lock:
            self._pending.discard(name)
            self._held.discard(name)
        return QuarantinedMessage(name=name, reason=reason)

    # -- held messages (they wait for the user) -----------------------------------------

    def held(self) -> list[ClaimedMessage | QuarantinedMessage]:
        """The held messages, oldest first, validated as a claim would validate them (an
        unsafe one is quarantined, never shown as a task)."""
        found: list[ClaimedMessage | QuarantinedMessage] = []
        for name in sorted(self._names("held")):
            path = self.root / "held" / name
            try:
                found.append(self._validate_claimed(name, path))
            except _Unsafe as exc:
                found.append(self._quarantine(name, path, str(exc)))
        return found

    def waiting(self) -> list[ClaimedMessage]:
        """The messages waiting in the inbox, oldest first, read without claiming them (for
        the history shown to the user; one that does not validate is left for the claim,
        which quarantines it)."""
        found: list[ClaimedMessage] = []
        for name in sorted(self._names("inbox")):
            with contextlib.suppress(_Unsafe):
                found.append(self._validate_claimed(name, self.root / "inbox" / name))
        return found

    def release(self, name: str) -> bool:
        """A held message goes to the inbox, to run next (its sequence is older)."""
        if SPOOL_NAME_RE.fullmatch(name) is None:
            return False
        return self._move(self.root / "held" / name, "inbox", "release")

    def hold(self, claimed: ClaimedMessage) -> bool:
        """A claimed message goes back to wait for the user in held/ (the host decided it
        must not run unasked); False when it is no longer in processing."""
        return self._move(claimed.path, "held", "hold")

    def _move(self, path: Path, subdir: str, verb: str) -> bool:
        """``path`` renamed into ``subdir``; False when it is gone, SpoolError when it
        cannot be moved (``verb`` says what the move is for)."""
        try:
            os.rename(path, self.root / subdir / path.name)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise SpoolError(f"cannot {verb} {path.name}: {exc.strerror}") from exc
        return True

    def discard(self, name: str) -> bool:
        """A held message the user chose not to run: removed, remembered as done."""
        if SPOOL_NAME_RE.fullmatch(name) is None:
            return False
        path = self.root / "held" / name
        if not path.exists():
            return False
        self._done_with(path)
        return True

    def complete(self, claimed: ClaimedMessage) -> None:
        """Drop the payload and keep an empty receipt marker for duplicate detection."""
        self._done_with(claimed.path)

    def _done_with(self, path: Path) -> None:
        marker = self.root / "done" / path.name
        with contextlib.suppress(FileExistsError):
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        if not self._recycle(path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        with self._lock:
            self._pending.discard(path.name)
            self._held.discard(path.name)
            now = self.clock()
            self._done.append((now, path.name))
            oldest_kept = now - DONE_RECEIPTS_MAX_AGE
            while self._done and (
                len(self._done) > DONE_RECEIPTS_MAX or self._done[0][0] < oldest_kept
            ):
                _, old = self._done.popleft()
                with contextlib.suppress(OSError):
                    os.unlink(self.root / "done" / old)

    def _recycle(self, path: Path) -> bool:
        """The payload file of a message that is done, emptied and renamed into ``tmp/`` as
        a spare for a later store (see top_up_spares): a rename instead of a file's
        creation, which is slow on some file systems (hundreds of microseconds on ext4
        here, against tens for a rename). Only a regular file of this user's with one link
        is reused; False (nothing changed, or an emptied file left) when it was not."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_uid != os.geteuid():
                return False
            os.ftruncate(fd, 0)  # the task's text is gone before the file moves
        except OSError:
            return False
        finally:
            os.close(fd)
        with self._lock:
            self._spare_count += 1
            name = f"{SPARE_PREFIX}{os.getpid()}-r{self._spare_count}"
        try:
            os.rename(path, f"{self._tmp_dir}/{name}")
        except OSError:
            return False
        return True

    def done_receipts(self) -> int:
        """Done markers on disk (bounded: DONE_RECEIPTS_MAX, DONE_RECEIPTS_MAX_AGE)."""
        return len(self._names("done"))


class _Unsafe(Exception):
    pass
