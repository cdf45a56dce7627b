"""``python -m zcoder.team.launch FILE``: what a worker's tmux window runs first.

FILE (zcoder.team.window.launch_file) holds the lead's environment, the worker's command
line and its directory. It is read once, only when it is a private regular file of this
user, and removed before anything runs; then this process becomes the worker (exec), so
the window's pid is the worker's. tmux's own TMUX, TMUX_PANE and TERM are kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Final

from zcoder.base.safefile import UnsafeFile, read_own_file

LAUNCH_MAX_BYTES: Final = 1024 * 1024
# What the new window keeps of its own (tmux sets them for its pane), not the lead's.
PANE_OWN: Final = ("TMUX", "TMUX_PANE", "TERM", "COLUMNS", "LINES")


def main(argv: list[str]) -> int:
    status = launch(argv)
    if sys.stdin.isatty():  # the window would close at once: let its user read why
        with contextlib.suppress(EOFError, OSError):
            input("Press Enter to close this window.")
    return status


def launch(argv: list[str]) -> int:
    """Become the worker; the exit status when that is not possible (said on stderr)."""
    if len(argv) != 1:
        print("usage: python -m zcoder.team.launch FILE", file=sys.stderr)
        return 2
    path = Path(argv[0])
    try:
        data = read_own_file(path, LAUNCH_MAX_BYTES)
        if os.stat(path).st_mode & 0o077:
            raise UnsafeFile("others may read or write it")
    except (UnsafeFile, OSError) as exc:
        print(f"zcoder: cannot start the worker from {path}: {exc}", file=sys.stderr)
        return 1
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
    try:
        spec = json.loads(data)
        command = [str(part) for part in spec["argv"]]
        env = {str(k): str(v) for k, v in spec["env"].items() if k not in PANE_OWN}
        cwd = str(spec["cwd"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        print(f"zcoder: the worker's launch file is not usable: {exc!r}", file=sys.stderr)
        return 1
    env.update({key: os.environ[key] for key in PANE_OWN if key in os.environ})
    if not command:
        print("zcoder: the worker's launch file names no command", file=sys.stderr)
        return 1
    try:
        os.chdir(cwd)
        os.execve(command[0], command, env)
    except OSError as exc:
        print(f"zcoder: cannot start the worker ({command[0]}): {exc}", file=sys.stderr)
    return 1  # reached only when exec failed: it replaces this process


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
