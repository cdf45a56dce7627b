"""Private files and directories: made private whatever the umask, and a small file of ours
read safely when another process may have tampered with it."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Final

from zcoder.base.errors import ZcoderError

PRIVATE_DIR_MODE: Final = 0o700
PRIVATE_FILE_MODE: Final = 0o600


class UnsafeFile(ZcoderError):
    """The file is not one we may trust; the message says why (for logs and the user)."""


def read_own_file(path: Path, limit: int) -> bytes:
    """A regular file owned by this user, at most ``limit`` bytes, read whole.

    Never follows a final symlink and never blocks on a FIFO or a device.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        raise UnsafeFile(f"cannot open it safely: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile("it is not a regular file")
        if st.st_uid != os.geteuid():
            raise UnsafeFile("it is not owned by this user")
        if st.st_size > limit:
            raise UnsafeFile(f"it is larger than {limit} bytes")
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, remaining)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise UnsafeFile(f"cannot read it: {exc.strerror}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise UnsafeFile(f"it is larger than {limit} bytes")
    return data


def replace_with(
    temporary: Path, final: Path, data: bytes, mode: int, *, durable: bool = False
) -> None:
    """Put ``data`` at ``final`` atomically: written whole to ``temporary`` (created
    afresh, never through a link, with ``mode``; fsynced before the rename when
    ``durable``), then renamed over ``final``; OSError when it cannot be, and no temporary
    file stays behind."""
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) with mode 0700 whatever the umask.

    An existing directory is left exactly as it is: its mode is the user's choice
    (zcoder.sessions.paths.looseness_warning tells the user when it is loose).
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # another process made it first; it is theirs to set up
        os.chmod(directory, PRIVATE_DIR_MODE)  # mkdir's mode is reduced by the umask only
    if not path.is_dir():
        raise NotADirectoryError(f"{path} exists but is not a directory")
