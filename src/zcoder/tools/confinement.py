"""Workspace confinement: every path a tool touches is resolved and checked here.

Paths are resolved with symlinks followed and must land inside the canonical workspace.
Access then goes through directory file descriptors opened component by component with
``O_NOFOLLOW``, starting at the workspace itself, so a directory swapped for a symlink
between the check and the access makes the access fail instead of escaping.  Writes go to
a temporary file in the target directory and are renamed over the name; ``rename`` replaces
a symlink rather than following it, so a final component turned into a symlink cannot
redirect a write either.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from zcoder.base.errors import ZcoderError
from zcoder.tools.offload import StopSignal

__all__ = [
    "ConfinedPath",
    "ConfinementError",
    "atomic_write",
    "canonical_workspace",
    "open_directory",
    "open_read",
    "read_bytes",
    "read_limited",
    "read_lines",
    "remove_file",
    "resolve_path",
    "resolve_write_target",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class ConfinementError(ZcoderError):
    """A path is outside the workspace, unsafe, or changed while being used.

    The message is meant for the model: it says what was wrong and what to do instead.
    """


@dataclass(frozen=True)
class ConfinedPath:
    """A path checked against the workspace.

    ``absolute`` is the resolved path; ``parts`` are its components relative to the
    workspace (empty for the workspace itself); ``display`` is the workspace-relative text
    shown to the model.
    """

    workspace: Path
    absolute: Path
    parts: tuple[str, ...]

    @property
    def display(self) -> str:
        return "/".join(self.parts) if self.parts else "."


def canonical_workspace(path: str | os.PathLike[str]) -> Path:
    """The canonical (symlink-free, absolute) form of a workspace directory."""
    resolved = Path(os.path.realpath(os.fspath(path)))
    if not resolved.is_dir():
        raise ConfinementError(f"workspace {resolved} is not a directory")
    return resolved


def _check_text(raw: str) -> None:
    if not isinstance(raw, str):
        raise ConfinementError("path must be a string")
    if "\x00" in raw:
        raise ConfinementError("path contains a NUL byte; give a plain relative path")
    if raw.strip() == "":
        raise ConfinementError("path is empty; use '.' for the workspace itself")


def _relative_parts(workspace: Path, resolved: Path, raw: str) -> tuple[str, ...]:
    if resolved == workspace:
        return ()
    if not resolved.is_relative_to(workspace):
        raise ConfinementError(
            f"path {raw!r} resolves to {resolved}, which is outside the workspace {workspace}; "
            "only paths inside the workspace can be used"
        )
    return resolved.relative_to(workspace).parts


def resolve_path(workspace: Path, raw: str) -> ConfinedPath:
    """Resolve ``raw`` (relative to the workspace, or absolute) with symlinks followed.

    Raises :class:`ConfinementError` unless the result lies inside the workspace.
    """
    _check_text(raw)
    joined = os.path.join(workspace, raw)
    resolved = Path(os.path.realpath(joined))
    return ConfinedPath(workspace, resolved, _relative_parts(workspace, resolved, raw))


def resolve_write_target(workspace: Path, raw: str) -> ConfinedPath:
    """Resolve a path that is about to be written, created or removed.

    The directory part is resolved with symlinks followed; the final name is not: a final
    component that is a symlink is refused, never followed.
    """
    _check_text(raw)
    if raw.endswith("/"):
        raise ConfinementError(f"{raw!r} ends with '/', so it names a directory, not a file")
    parent_text, name = os.path.split(raw)
    if name in ("", ".", ".."):
        raise ConfinementError(f"{raw!r} does not name a file")
    parent = Path(os.path.realpath(os.path.join(workspace, parent_text or ".")))
    parent_parts = _relative_parts(workspace, parent, raw)
    target = parent / name
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        pass
    except NotADirectoryError as exc:
        raise ConfinementError(f"{raw!r}: a parent of this path is not a directory") from exc
    else:
        if stat.S_ISLNK(st.st_mode):
            raise ConfinementError(
                f"{raw!r} is a symbolic link; writes never follow links — write to the real "
                "file inside the workspace instead"
            )
        if stat.S_ISDIR(st.st_mode):
            raise ConfinementError(f"{raw!r} is a directory, not a file")
    return ConfinedPath(workspace, target, (*parent_parts, name))


@contextlib.contextmanager
def open_directory(
    workspace: Path, parts: tuple[str, ...], *, create: bool = False
) -> Iterator[int]:
    """Open the directory ``workspace/parts`` without following any symlink on the way.

    With ``create``, missing directories are made (inside the workspace only, since every
    step is relative to an already-confined directory descriptor).
    """
    fd = os.open(workspace, _DIR_FLAGS)
    try:
        for part in parts:
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        yield fd
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ConfinementError(
                "a directory on the path is a symbolic link or not a directory "
                "(it may have changed during the operation); nothing was written"
            ) from exc
        raise
    finally:
        os.close(fd)


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def open_read(path: ConfinedPath) -> BinaryIO:
    """Open a regular file for reading without following symlinks on the way.

    The file is opened with O_NONBLOCK, so a FIFO with no writer cannot hang the caller,
    and its type is checked on the open descriptor. Raises :class:`ConfinementError` for
    directories, FIFOs, sockets, devices and anything else that is not a regular file.
    """
    if not path.parts:
        raise ConfinementError("'.' is the workspace directory, not a file; use list_files")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    with open_directory(path.workspace, path.parts[:-1]) as dir_fd:
        try:
            fd = os.open(path.parts[-1], flags, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket cannot be opened
                with contextlib.suppress(OSError):
                    st = os.stat(path.parts[-1], dir_fd=dir_fd, follow_symlinks=False)
                    raise ConfinementError(
                        f"{path.display} is {kind_of(st.st_mode)}; zcoder reads only regular files"
                    ) from exc
            if exc.errno == errno.ELOOP:
                raise ConfinementError(
                    f"{path.display} changed into a symbolic link while being opened"
                ) from exc
            raise
    handle = os.fdopen(fd, "rb")
    try:
        st = os.fstat(handle.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise ConfinementError(f"{path.display} is a directory; use list_files")
        if not stat.S_ISREG(st.st_mode):
            raise ConfinementError(
                f"{path.display} is {kind_of(st.st_mode)}; zcoder reads only regular files"
            )
        os.set_blocking(fd, True)  # a regular file: ordinary reads from here on
    except BaseException:
        handle.close()
        raise
    return handle


READ_CHUNK_BYTES = 1024 * 1024
"""Whole-file reads go in pieces this large, with a stop check between them."""


def read_bytes(path: ConfinedPath, limit: int, stop: StopSignal | None = None) -> bytes:
    """Read a whole regular file of at most ``limit`` bytes.

    Raises :class:`ConfinementError` for non-regular files and files larger than ``limit``
    (the file is refused, not truncated), ``OSError`` for ordinary I/O failures, and
    ``ToolStopped`` when ``stop`` is set between two pieces of the read.
    """
    with open_read(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = read_limited(handle, limit + 1, stop)
    if size > limit or len(data) > limit:
        raise ConfinementError(
            f"{path.display} is {max(size, len(data))} bytes, larger than the {limit}-byte "
            "limit; read it in parts with read_file_range or use search"
        )
    return data


def read_limited(handle: BinaryIO, limit: int, stop: StopSignal | None = None) -> bytes:
    """At most ``limit`` bytes from ``handle``, read in pieces with a stop check before each."""
    pieces: list[bytes] = []
    left = limit
    while left > 0:
        if stop is not None:
            stop.check()
        piece = handle.read(min(left, READ_CHUNK_BYTES))
        if not piece:
            break
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)


def read_lines(handle: BinaryIO, stop: StopSignal) -> Iterator[bytes]:
    """The lines of ``handle``, exactly as iterating it gives them, read in pieces of
    ``READ_CHUNK_BYTES`` with a stop check before each: a minified file's one line of
    hundreds of megabytes is not read whole before the next check. (Splitting pieces
    costs far less than a readline per line: a search over many lines is about a third
    slower than plain iteration, not twice.)"""
    pending: list[bytes] = []  # the start of a line that goes on in the next piece
    while True:
        stop.check()
        piece = handle.read(READ_CHUNK_BYTES)
        if not piece:
            if pending:
                yield b"".join(pending)
            return
        lines = piece.split(b"\n")
        if len(lines) == 1:
            pending.append(piece)
            continue
        pending.append(lines[0])
        yield b"".join(pending) + b"\n"
        last = lines.pop()
        for index in range(1, len(lines)):
            yield lines[index] + b"\n"
        pending = [last] if last else []


def atomic_write(path: ConfinedPath, data: bytes, *, create_parents: bool = True) -> bool:
    """Create or replace the file at ``path`` atomically; return True if it existed.

    The data goes to a temporary file in the same directory, is fsynced, and is renamed
    over the final name; the directory is fsynced afterwards.  An existing file keeps its
    permission bits.
    """
    if not path.parts:
        raise ConfinementError("cannot write to the workspace directory itself")
    name = path.parts[-1]
    with open_directory(path.workspace, path.parts[:-1], create=create_parents) as dir_fd:
        mode = 0o666 & ~_current_umask()
        existed = False
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISLNK(st.st_mode):
                raise ConfinementError(
                    f"{path.display} is a symbolic link; writes never follow links"
                )
            if not stat.S_ISREG(st.st_mode):
                raise ConfinementError(
                    f"{path.display} exists and is {kind_of(st.st_mode)}; zcoder writes only"
                    " regular files"
                )
            existed = True
            mode = stat.S_IMODE(st.st_mode)
        tmp_name = f".{name}.zcoder-{secrets.token_hex(6)}.tmp"
        fd = os.open(
            tmp_name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dir_fd,
        )
        try:
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name, dir_fd=dir_fd)
            raise
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)
        return existed


def remove_file(path: ConfinedPath) -> None:
    """Remove the regular file (or symlink itself) named by ``path``; never follows links."""
    if not path.parts:
        raise ConfinementError("cannot remove the workspace directory")
    with open_directory(path.workspace, path.parts[:-1]) as dir_fd:
        st = os.stat(path.parts[-1], dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            raise ConfinementError(f"{path.display} is a directory")
        os.unlink(path.parts[-1], dir_fd=dir_fd)
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)


def _current_umask() -> int:
    # os.umask can only be read by setting it; do it once and restore immediately.
    current = os.umask(0o022)
    os.umask(current)
    return current
