"""Code run in other processes by the session tests (importable, so `spawn` can find it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from zcoder.sessions import SessionStore

WRITES_PER_WRITER = 200


def hammer(home: str, workspace: str, shared_id: str, *, writer: int, go: Any, out: Any) -> None:
    """Make WRITES_PER_WRITER writes to a session of its own and one to the shared one each
    round; report the own session id."""
    with SessionStore(Path(home)) as store:
        own = store.create_session(workspace, "coding", f"model-{writer}")
        go.wait(30)
        tool_event = 0
        for i in range(WRITES_PER_WRITER):
            kind = i % 4
            if kind == 0:
                store.record_user_message(own.id, f"w{writer} typed {i}")
            elif kind == 1:
                tool_event = store.append_event(
                    own.id, "tool", f"w{writer} tool {i}", {"status": "running", "i": i}
                )
            elif kind == 2:
                store.update_event(tool_event, metadata={"status": "completed", "i": i - 1})
            else:
                store.append_messages(own.id, [{"role": "assistant", "content": f"w{writer} {i}"}])
            store.append_event(shared_id, "assistant", f"w{writer} shared {i}", {"w": writer})
        out.put(own.id)


def open_fresh_store(home: str, workspace: str, go: Any, out: Any) -> None:
    """Open a store that may not exist yet, at the same moment as other processes."""
    go.wait(30)
    with SessionStore(Path(home)) as store:
        out.put(store.create_session(workspace, "coding", "m").id)


def leave_running_tool(home: str, workspace: str, session_id: str) -> None:
    """Start a tool and die without finishing it."""
    with SessionStore(Path(home)) as store:
        store.append_event(session_id, "tool", "$ make", {"status": "running", "tool": "x"})


def create_empty_and_hold(home: str, workspace: str, out: Any, release: Any) -> None:
    """Start a session, report it, and stay alive (idle) until released."""
    with SessionStore(Path(home)) as store:
        out.put(store.reuse_or_create(workspace, "coding", "m").id)
        release.wait(30)


LOCK_HOLDER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE")
else:
    conn.execute("BEGIN IMMEDIATE")
conn.execute("PRAGMA user_version")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
conn.close()
"""


if __name__ == "__main__":
    sys.exit("not a program")
