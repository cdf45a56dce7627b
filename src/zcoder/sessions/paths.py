"""Where the store lives, and creating its directory and file private from the start."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from zcoder.base.safefile import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE

STORE_FILE_NAME = "sessions.db"


def default_home(env: Mapping[str, str]) -> Path:
    """``$ZCODER_HOME``, else ``${XDG_CONFIG_HOME:-~/.config}/zcoder``.

    Empty variables count as unset; a relative ``XDG_CONFIG_HOME`` is ignored, as the XDG
    base directory specification asks. ``~`` is expanded with ``env["HOME"]`` when present.
    """
    home_dir = env.get("HOME") or str(Path.home())

    def expand(value: str) -> Path:
        if value == "~" or value.startswith("~/"):
            value = home_dir + value[1:]
        return Path(os.path.expanduser(value))

    zcoder_home = env.get("ZCODER_HOME", "")
    if zcoder_home:
        return expand(zcoder_home).absolute()
    xdg = env.get("XDG_CONFIG_HOME", "")
    config = Path(xdg) if xdg and os.path.isabs(xdg) else Path(home_dir) / ".config"
    return config / "zcoder"


def canonical_workspace(workspace: str | os.PathLike[str]) -> str:
    """The key a workspace is stored under: its absolute path with symlinks resolved."""
    return str(Path(workspace).resolve())


def create_private_file(path: Path) -> bool:
    """Create an empty ``path`` with mode 0600 if it does not exist; True if created here."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
    finally:
        os.close(fd)
    return True


def looseness_warning(path: Path) -> str | None:
    """A notice for the user when ``path`` is readable or writable by group or others."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    if mode & 0o077 == 0:
        return None
    private = PRIVATE_DIR_MODE if path.is_dir() else PRIVATE_FILE_MODE
    return (
        f"{path} is accessible by other users (mode {mode:04o}); "
        f"saved sessions may be readable by them. Run: chmod {private:o} {path}"
    )
