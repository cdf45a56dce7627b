"""Finding a session by the id the user typed, and the lines that show sessions to people.

One piece of code for the one fact "how a session is listed": ``--resume`` with an unknown
or ambiguous id (stderr), ``/sessions`` (the transcript) and the exit hint use it.
An id may be abbreviated to any prefix that names one session of this workspace and
profile, as git abbreviates commits.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from zcoder.base.errors import UsageError
from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.model.context import same_model
from zcoder.model.host import normalize_host
from zcoder.sessions import SessionInfo, SessionNotFoundError, SessionStore, shown_title
from zcoder.sessions.locks import SessionLock
from zcoder.sessions.locks import acquire as acquire_session_lock

RECENT_LISTED = 10
"""How many recent sessions an unknown ``--resume`` id lists."""


def lock_resumed(home: Path, session_id: str) -> SessionLock | None:
    """The saved session's lock, as ``--resume`` takes it in every mode (unguarded where
    none can be made); SessionNotFoundError for what is not even the shape of an id."""
    try:
        return acquire_session_lock(home, session_id)
    except ValueError:
        raise SessionNotFoundError(session_id) from None
    except OSError:
        logging.getLogger(__name__).warning("cannot lock %s", session_id, exc_info=True)
        return None


class ResumeError(UsageError):
    """The id names no session, or several; ``str(error)`` is the text for the user."""


def age(seconds: float) -> str:
    """``just now``, ``5 min ago``, ``3 h ago``, ``2 days ago``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    return f"{counted(days, 'day')} ago"


def session_lines(
    sessions: Sequence[SessionInfo],
    *,
    now: float | None = None,
    counts: Mapping[str, int] | None = None,
    current: str | None = None,
) -> list[str]:
    """One aligned line per session: id, age, [model, messages,] title (made visible);
    the title of a ``--prompt`` run's session says so."""
    now = time.time() if now is None else now
    rows: list[list[str]] = []
    for info in sessions:
        row = [info.id, age(now - info.updated_at)]
        if counts is not None:
            count = counts.get(info.id, 0)
            row += [visible(info.model), counted(count, "message")]
        row.append(("(--prompt) " if info.one_shot else "") + visible(shown_title(info.title)))
        rows.append(row)
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for info, row in zip(sessions, rows, strict=True):
        marker = "" if current is None else ("● " if info.id == current else "  ")
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append(marker + "  ".join([*cells, row[-1]]))
    return lines


def find_session(
    store: SessionStore, typed: str, workspace: str | os.PathLike[str], profile: str
) -> SessionInfo:
    """The one session of this scope that ``typed`` (an id or a prefix of one) names.

    Raises :class:`ResumeError` saying what was found instead: nothing (with the recent
    ids of this workspace) or several sessions (with them).
    """
    typed = typed.strip()
    found = store.find_sessions(typed, workspace, profile) if typed else []
    if len(found) == 1:
        return found[0]
    where = f"this workspace ({workspace}, profile {profile})"
    if found:
        lines = [f"{typed!r} names {len(found)} sessions in {where}; type more of the id:"]
        lines += ["  " + line for line in session_lines(found[:RECENT_LISTED])]
        raise ResumeError("\n".join(lines))
    lines = [f"no session {visible(typed)!r} in {where}"]
    recent = store.list_sessions(workspace, profile)[:RECENT_LISTED]
    if recent:
        lines.append("Recent sessions here (zcoder --resume ID; a unique prefix is enough):")
        lines += ["  " + line for line in session_lines(recent)]
    else:
        lines.append("There are no saved sessions here yet.")
    raise ResumeError("\n".join(lines))


def resume_command(
    session_id: str,
    workspace: Path,
    profile: str,
    cwd: str | os.PathLike[str] | None = None,
    *,
    start: Sequence[str] = ("zcoder",),
    backend: Sequence[str] = (),
) -> str:
    """The command that reopens the session from ``cwd``: ``start`` (how zcoder was
    started: ``start_words``) with ``--resume ID``, the ``backend`` flags
    (``backend_flags``), and ``-w`` and ``--profile`` when they are not what a plain start
    there would use. Started by ``make``, the options go in ``ARGS``."""
    here = Path(os.getcwd() if cwd is None else cwd).resolve()
    words = ["--resume", session_id, *backend]
    if Path(workspace).resolve() != here:
        words += ["-w", str(workspace)]
    if profile != (os.environ.get("ZCODER_PROFILE", "").strip().lower() or "coding"):
        words += ["--profile", profile]
    if list(start[:1]) == ["make"]:
        return shlex.join([*start, f"ARGS={shlex.join(words)}"])
    return shlex.join([*start, *words])


STARTED_BY: Final = "ZCODER_STARTED_BY"
"""How the Makefile's ``run`` and ``demo`` say they started zcoder (``make -C DIR run``):
the venv's zcoder is not on PATH then. Not ``MAKELEVEL``, which any make sets, a test
suite run by make included."""


def start_words(argv0: str | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """How to start this zcoder again from where the user is: ``make -C DIR run`` when
    the Makefile started it (``make run``, ``make demo``), ``PYTHON -m zcoder`` for
    ``python -m zcoder``, ``zcoder`` when that is what PATH finds, else the program's
    absolute path."""
    env = os.environ if environ is None else environ
    program = sys.argv[0] if argv0 is None else argv0
    started = shlex.split(env.get(STARTED_BY, ""))
    if started[:1] == ["make"]:
        return started
    if Path(program).name == "__main__.py":
        return [sys.executable or "python3", "-m", "zcoder"]
    found = shutil.which("zcoder", path=env.get("PATH"))
    absolute = os.path.abspath(program)
    try:
        if found is not None and os.path.samefile(found, absolute):
            return ["zcoder"]
    except OSError:
        pass
    return [absolute]


def backend_flags(
    *,
    backend: str,
    host: str,
    base_url: str,
    gguf: Path | None,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """The flags that bring back the model server a session ran with, where the
    environment alone would not: ``--gguf FILE`` for an embedded model (its server's
    address dies with it), ``--base-url URL`` for an OpenAI-compatible server, ``--host``
    for another Ollama."""
    env = os.environ if environ is None else environ
    if gguf is not None:
        given = env.get("ZCODER_GGUF", "").strip()
        same = bool(given) and Path(given).expanduser().resolve() == gguf.resolve()
        return [] if same else ["--gguf", str(gguf.resolve())]
    if backend == "openai":
        same = env.get("ZCODER_BASE_URL", "").strip() == base_url
        return [] if same else ["--base-url", base_url]
    try:
        same = normalize_host(env.get("OLLAMA_HOST", "")) == host
    except ValueError:
        same = False
    return [] if same else ["--host", host]


def restored_model(
    session_model: str, current: str, available: Sequence[str] | None
) -> tuple[str, str | None]:
    """The model to use on resuming a session whose model was ``session_model``, and a
    notice when it is not ``current``. ``available``: what the server lists (None when
    it could not be asked: the session's model is trusted then)."""
    if not session_model or same_model(session_model, current):
        return current, None
    if available is not None and not any(same_model(session_model, m) for m in available):
        return current, (
            f"This session used the model {session_model}, which the server does not list; "
            f"keeping {current}."
        )
    return session_model, f"Model: {session_model} (this session's model; it was {current})."
