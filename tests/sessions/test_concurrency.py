"""Several zcoder processes share one store file; none of their writes is lost."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.sessions import workers
from zcoder.sessions import SessionStore

WRITERS = 3
SPAWN = multiprocessing.get_context("spawn")


def run(
    target: Callable[..., None], *args: object, **kwargs: object
) -> multiprocessing.process.BaseProcess:
    process = SPAWN.Process(target=target, args=args, kwargs=kwargs)
    process.start()
    return process


def test_processes_writing_at_once_lose_no_write(home: Path, workspace: Path) -> None:
    with SessionStore(home) as store:
        shared = store.create_session(workspace, "coding", "m")
    go = SPAWN.Barrier(WRITERS)  # all writers start their writes together
    out = SPAWN.Queue()
    processes = [
        run(workers.hammer, str(home), str(workspace), shared.id, writer=n, go=go, out=out)
        for n in range(WRITERS)
    ]
    try:
        own_ids = [out.get(timeout=90) for _ in range(WRITERS)]
    finally:
        for process in processes:
            process.join(timeout=30)
    assert [p.exitcode for p in processes] == [0] * WRITERS

    n_rounds = workers.WRITES_PER_WRITER
    with SessionStore(home) as store:
        shared_events = store.load(shared.id, workspace, "coding").events
        assert [e.seq for e in shared_events] == list(range(1, WRITERS * n_rounds + 1))
        for n in range(WRITERS):
            texts = [e.text for e in shared_events if e.metadata == {"w": n}]
            assert texts == [f"w{n} shared {i}" for i in range(n_rounds)]

        by_model = {}
        for own_id in own_ids:
            data = store.load(own_id, workspace, "coding")
            by_model[data.info.model] = data
        assert sorted(by_model) == [f"model-{n}" for n in range(WRITERS)]
        for n in range(WRITERS):
            data = by_model[f"model-{n}"]
            typed = [f"w{n} typed {i}" for i in range(0, n_rounds, 4)]
            assert data.user_ledger == typed
            assert data.info.title == typed[0]
            tools = [e for e in data.events if e.role == "tool"]
            assert [e.text for e in tools] == [f"w{n} tool {i}" for i in range(1, n_rounds, 4)]
            assert all(e.metadata["status"] == "completed" for e in tools)
            assert [m["content"] for m in data.messages] == [
                f"w{n} {i}" for i in range(3, n_rounds, 4)
            ]


def test_processes_creating_the_store_at_once_all_succeed(home: Path, workspace: Path) -> None:
    go = SPAWN.Barrier(WRITERS + 1)
    out = SPAWN.Queue()
    processes = [
        run(workers.open_fresh_store, str(home), str(workspace), go, out) for _ in range(WRITERS)
    ]
    try:
        go.wait(timeout=60)
        with SessionStore(home) as store:
            mine = store.create_session(workspace, "coding", "m")
        theirs = [out.get(timeout=60) for _ in range(WRITERS)]
    finally:
        for process in processes:
            process.join(timeout=30)
    assert [p.exitcode for p in processes] == [0] * WRITERS
    with SessionStore(home) as store:
        listed = {s.id for s in store.list_sessions(workspace, "coding")}
    assert listed == {mine.id, *theirs}


def test_running_tool_of_a_process_that_died_shows_as_interrupted(
    home: Path, workspace: Path
) -> None:
    with SessionStore(home) as store:
        info = store.create_session(workspace, "coding", "m")
        store.record_user_message(info.id, "build it")
    writer = run(workers.leave_running_tool, str(home), str(workspace), info.id)
    writer.join(timeout=60)
    assert writer.exitcode == 0
    with SessionStore(home) as store:
        data = store.load(info.id, workspace, "coding")
        user, tool = data.events
        assert user.text == "build it"
        assert tool.metadata == {"status": "interrupted", "tool": "x"}
        assert tool.text == "$ make"
        assert store.load(info.id, workspace, "coding") == data  # marked once, stable after


def test_empty_session_held_by_a_live_process_is_not_taken(home: Path, workspace: Path) -> None:
    out = SPAWN.Queue()
    release = SPAWN.Event()
    holder = run(workers.create_empty_and_hold, str(home), str(workspace), out, release)
    try:
        held = out.get(timeout=60)
        with SessionStore(home) as store:
            mine = store.reuse_or_create(workspace, "coding", "m")
            assert mine.id != held
    finally:
        release.set()
        holder.join(timeout=30)
    assert holder.exitcode == 0


def test_empty_session_of_a_process_that_exited_is_reused(home: Path, workspace: Path) -> None:
    out = SPAWN.Queue()
    release = SPAWN.Event()
    release.set()
    holder = run(workers.create_empty_and_hold, str(home), str(workspace), out, release)
    held = out.get(timeout=60)
    holder.join(timeout=30)
    assert holder.exitcode == 0
    with SessionStore(home) as store:
        assert store.reuse_or_create(workspace, "coding", "m").id == held


def test_running_tool_whose_pid_was_reused_shows_as_interrupted(
    home: Path, workspace: Path
) -> None:
    import sqlite3

    from zcoder.sessions.liveness import current_stamp

    with SessionStore(home) as store:
        info = store.create_session(workspace, "coding", "m")
        store.append_event(info.id, "tool", "$ make", {"status": "running"})
    me = current_stamp()
    if not me.token:
        pytest.skip("no /proc here: only the pid can be checked")
    raw = sqlite3.connect(home / "sessions.db")
    raw.execute("UPDATE events SET writer_token = 'an-earlier-boot:1'")  # same pid, not us
    raw.commit()
    raw.close()
    with SessionStore(home) as store:
        (tool,) = store.load(info.id, workspace, "coding").events
    assert tool.metadata == {"status": "interrupted"}
