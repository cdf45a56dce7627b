"""Session locks: held while a session is open, freed by the kernel when the holder dies,
and the one thing that decides which empty session a starting zcoder may take."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from zcoder.sessions import SessionStore
from zcoder.sessions.locks import (
    LockTaker,
    SessionInUseError,
    acquire,
    holder_pid,
    lock_path,
)

SRC = Path(__file__).resolve().parents[2] / "src"
HOLDER = textwrap.dedent(
    """
    import sys, time
    from zcoder.sessions.locks import acquire
    lock = acquire(sys.argv[1], sys.argv[2])
    print("held", flush=True)
    time.sleep(120)
    """
)


def start_holder(home: Path, session_id: str) -> subprocess.Popen[str]:
    """A real second process that takes the session's lock and keeps it."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home), session_id],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def stop(proc: subprocess.Popen[str], signum: int) -> None:
    proc.send_signal(signum)
    proc.wait(timeout=10)
    assert proc.stdout is not None
    proc.stdout.close()


def test_a_lock_held_by_another_process_is_refused_with_its_pid(home: Path) -> None:
    proc = start_holder(home, "1788012120_10392")
    try:
        with pytest.raises(SessionInUseError) as refused:
            acquire(home, "1788012120_10392")
        assert refused.value.pid == proc.pid
        assert str(refused.value) == (
            f"session 1788012120_10392 is open in another zcoder (pid {proc.pid})"
        )
        acquire(home, "1788012120_10393").release()  # another session is free
    finally:
        stop(proc, signal.SIGTERM)


def test_a_killed_holder_frees_the_lock_at_once(home: Path) -> None:
    proc = start_holder(home, "1788012120_10392")
    stop(proc, signal.SIGKILL)  # no clean-up code of the holder ran
    with acquire(home, "1788012120_10392") as lock:
        assert lock.held
        assert holder_pid(home, "1788012120_10392") == os.getpid()


def test_release_frees_it_and_two_opens_in_one_process_exclude_each_other(home: Path) -> None:
    first = acquire(home, "s_1")
    with pytest.raises(SessionInUseError):
        acquire(home, "s_1")  # flock: per open file, so two apps in one process are two
    first.release()
    first.release()  # idempotent
    acquire(home, "s_1").release()


def test_lock_files_are_private_and_ids_cannot_leave_the_directory(home: Path) -> None:
    acquire(home, "s_1").release()
    path = lock_path(home, "s_1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for bad in ("../x", "a/b", "", ".hidden", "x" * 65):
        with pytest.raises(ValueError):
            lock_path(home, bad)


def test_the_lock_is_not_inherited_by_commands_the_agent_runs(home: Path) -> None:
    lock = acquire(home, "s_1")
    child = subprocess.Popen(["sleep", "60"], close_fds=False)
    try:
        lock.release()
        acquire(home, "s_1").release()  # the child did not keep it
    finally:
        child.kill()
        child.wait()


def test_two_starts_never_get_the_same_fresh_session(home: Path, workspace: Path) -> None:
    with SessionStore(home) as one, SessionStore(home) as two:
        first_taker = LockTaker(home)
        first = one.reuse_or_create(workspace, "coding", "m", take=first_taker)
        second_taker = LockTaker(home)
        second = two.reuse_or_create(workspace, "coding", "m", take=second_taker)
        assert first.id != second.id
        assert [e.session_id for e in second_taker.in_use] == [first.id]
        assert first_taker.lock is not None and second_taker.lock is not None
        # Once the first lets go, its empty session is taken again rather than a third made.
        first_taker.lock.release()
        third_taker = LockTaker(home)
        third = two.reuse_or_create(workspace, "coding", "m", take=third_taker)
        assert third.id == first.id
        assert [e.session_id for e in third_taker.in_use] == [second.id]  # newer, but held


def test_an_empty_session_of_a_crashed_zcoder_is_reused(home: Path, workspace: Path) -> None:
    with SessionStore(home) as store:
        made = store.create_session(workspace, "coding", "m")
        proc = start_holder(home, made.id)
        taker = LockTaker(home)
        other = store.reuse_or_create(workspace, "coding", "m", take=taker)
        assert other.id != made.id and taker.in_use[0].pid == proc.pid
        assert taker.lock is not None
        taker.lock.release()
        stop(proc, signal.SIGKILL)
        again = LockTaker(home)
        # The newest empty one (``other``) comes first; with it held, the crashed one is next.
        keep = acquire(home, other.id)
        try:
            assert store.reuse_or_create(workspace, "coding", "m", take=again).id == made.id
        finally:
            keep.release()


def test_mine_is_handed_back_without_a_second_lock(home: Path, workspace: Path) -> None:
    with SessionStore(home) as store:
        taker = LockTaker(home)
        info = store.reuse_or_create(workspace, "coding", "m", take=taker)
        again = LockTaker(home, mine=info.id)
        assert store.reuse_or_create(workspace, "coding", "m", take=again).id == info.id
        assert again.lock is None and again.in_use == []
        assert taker.lock is not None
        taker.lock.release()


STARTERS = 4


def test_zcoders_starting_at_once_each_get_a_session_of_their_own(
    home: Path, workspace: Path
) -> None:
    import multiprocessing

    from tests.sessions import lock_workers

    spawn = multiprocessing.get_context("spawn")
    with SessionStore(home) as store:
        empty = store.create_session(workspace, "coding", "m")  # all want this one
    go, done, out = spawn.Barrier(STARTERS), spawn.Event(), spawn.Queue()
    processes = [
        spawn.Process(
            target=lock_workers.start_like_zcoder,
            args=(str(home), str(workspace)),
            kwargs={"go": go, "out": out, "done": done},
        )
        for _ in range(STARTERS)
    ]
    for process in processes:
        process.start()
    try:
        ids = [out.get(timeout=90) for _ in range(STARTERS)]
    finally:
        done.set()
        for process in processes:
            process.join(timeout=30)
    assert [p.exitcode for p in processes] == [0] * STARTERS
    assert len(set(ids)) == STARTERS  # nobody shares
    assert empty.id in ids  # and the empty one was reused, by one of them
