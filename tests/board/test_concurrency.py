"""Claims between real processes: 1,000 of them from 8 processes on 100 tasks, and
claimants killed with SIGKILL (the kernel frees their tasks, no heartbeat, no clock)."""

from __future__ import annotations

import collections
import signal
from pathlib import Path

from tests.board.support import claimer, wait_for
from zcoder.board import Board, Claimant, State, TaskRefused

PROCESSES = 8
TASKS = 100
ATTEMPTS_EACH = 125  # 8 x 125 = 1,000 claims tried


def test_a_thousand_claims_from_eight_processes_never_claim_a_task_twice(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    board = Board.for_workspace(home, workspace)
    for number in range(TASKS):
        board.add(f"task {number + 1}", author="test")
    markers, go = tmp_path / "markers", tmp_path / "go"
    markers.mkdir()
    processes = [
        claimer(
            home,
            "stress",
            str(home),
            str(workspace),
            str(markers),
            str(go),
            str(ATTEMPTS_EACH),
            str(seed),
        )
        for seed in range(PROCESSES)
    ]
    go.touch()
    outputs = [process.communicate(timeout=300) for process in processes]
    assert [process.returncode for process in processes] == [0] * PROCESSES, outputs
    lines = [line for out, _err in outputs for line in out.splitlines()]
    assert not [line for line in lines if line.startswith("DOUBLE")]
    assert lines.count("END") == PROCESSES
    done = collections.Counter(int(line.split()[1]) for line in lines if line.startswith("DONE"))
    claims = sum(1 for line in lines if line.startswith("CLAIMED"))
    tasks = board.tasks()
    # Each task done at most once, and the board says so for exactly those.
    assert max(done.values()) == 1
    assert {t.id for t in tasks if t.state is State.DONE} == set(done)
    # None lost: every task is done or open (given back), none stuck claimed.
    assert len(tasks) == TASKS
    assert {t.state for t in tasks} <= {State.DONE, State.OPEN}
    assert claims >= len(done)
    print(f"\n{claims} claims made of {PROCESSES * ATTEMPTS_EACH} tried; {len(done)} done")
    # Every task left open can still be claimed, once.
    me = Claimant.this_process("test")
    for task in tasks:
        if task.state is State.OPEN:
            board.claim(task.id, me).settle(State.DONE)
    assert {t.state for t in board.tasks()} == {State.DONE}


def test_a_claimant_killed_with_sigkill_frees_its_task(home: Path, workspace: Path) -> None:
    board = Board.for_workspace(home, workspace)
    task = board.add("held by a process that dies", author="test")
    holder = claimer(home, "hold", str(home), str(workspace), str(task.id))
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == f"HOLDING {task.id}"
        me = Claimant.this_process("test")
        shown = board.task(task.id)
        assert shown.state is State.CLAIMED and shown.claimant == "holder"
        try:
            board.claim(task.id, me)
            raise AssertionError("claimed a task a live process holds")
        except TaskRefused as exc:
            assert "claimed by holder" in str(exc)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
        # Free at once: the kernel dropped the lock with the process.
        claim = board.claim(task.id, me)
    finally:
        holder.kill()
        holder.wait(timeout=60)
    assert claim.task.claimant == "test"
    notes = [note.text for note in claim.task.notes]
    assert any("ended with its process" in text for text in notes)


def test_readers_see_a_killed_claimants_task_open_without_a_claim(
    home: Path, workspace: Path
) -> None:
    board = Board.for_workspace(home, workspace)
    task = board.add("watched", author="test")
    holder = claimer(home, "hold", str(home), str(workspace), str(task.id))
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == f"HOLDING {task.id}"
    mark = board.change_mark()
    holder.kill()
    holder.wait(timeout=60)
    wait_for(lambda: board.change_mark() != mark, "the change mark to move")
    [seen] = board.tasks()
    assert seen.state is State.OPEN and seen.claimant is None
