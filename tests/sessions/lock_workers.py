"""Code run in other processes by the session-lock tests (importable, so `spawn` finds it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zcoder.sessions import SessionStore
from zcoder.sessions.locks import LockTaker


def start_like_zcoder(home: str, workspace: str, *, go: Any, out: Any, done: Any) -> None:
    """What a starting zcoder does: take the newest free empty session, or a new one; keep
    it (and its lock) until the test says ``done``; report the id."""
    with SessionStore(Path(home)) as store:
        taker = LockTaker(home)
        go.wait(30)
        info = store.reuse_or_create(workspace, "coding", "m", take=taker)
        out.put(info.id)
        done.wait(60)
        if taker.lock is not None:
            taker.lock.release()
