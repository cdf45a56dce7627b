"""Stopping a turn while a file tool works: the event loop never waits on the tool, the
tool's thread stops at its next check point, the call is recorded as interrupted, and a
write is whole or not done at all.

Slowness is a brake, not a clock: a stand-in for one step of the tool (a directory entry,
a file opened, a piece read, a line, a write) that blocks the tool's thread at its Nth
step until the call's stop signal is set. Had the tool run on the event loop, the loop
would be blocked in the brake and nothing below could happen (the brake gives up after a
generous deadline and the test fails). No assertion depends on how long anything takes.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import zcoder.tools.edits as tool_edits
from tests.agent.support import Harness, tool_call_ids, tool_result_ids, wait_until
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import Outcome, ToolFinished, TurnFinished, tool_round
from zcoder.agent.prompts import INTERRUPTED, NOT_EXECUTED
from zcoder.tools import confinement, files, patch, search
from zcoder.tools.ignore import IgnoreMatcher
from zcoder.tools.offload import THREAD_PREFIX, StopSignal

BRAKE_DEADLINE = 20.0  # only a broken implementation ever waits this long


class Brake:
    """Counts a tool's steps; at step ``at`` blocks the tool's thread until stopped."""

    def __init__(self, at: int, signals: list[StopSignal]) -> None:
        self.at = at
        self.signals = signals
        self.steps = 0
        self.after_stop = 0  # steps taken once the call was stopped
        self.reached = threading.Event()
        self.gave_up = False
        self.on_loop = False

    def step(self) -> None:
        self.steps += 1
        signal = self.signals[-1] if self.signals else None
        if signal is not None and signal.is_set():
            self.after_stop += 1
        if self.steps == self.at:
            self.on_loop = threading.current_thread() is threading.main_thread()
            self.reached.set()
            assert signal is not None
            self.gave_up = not signal.wait(BRAKE_DEADLINE)

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def braked(*args: Any, **kwargs: Any) -> Any:
            self.step()
            return fn(*args, **kwargs)

        return braked


class BrakedHandle:
    """A file handle whose every read is one step of the brake."""

    def __init__(self, inner: Any, brake: Brake) -> None:
        self.inner = inner
        self.brake = brake

    def read(self, size: int = -1) -> bytes:
        self.brake.step()
        data: bytes = self.inner.read(size)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __enter__(self) -> BrakedHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.close()


@pytest.fixture
def signals(monkeypatch: pytest.MonkeyPatch) -> list[StopSignal]:
    """Every stop signal the agent gives a call, in order."""
    made: list[StopSignal] = []

    class Recorded(StopSignal):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(tool_round, "StopSignal", Recorded)
    return made


def braked_open(monkeypatch: pytest.MonkeyPatch, brake: Brake, *modules: Any) -> None:
    """open_read in ``modules`` returns handles that step the brake; files are read in
    pieces of 64 bytes, so that even a small file takes many steps."""
    real = confinement.open_read
    for module in modules:
        monkeypatch.setattr(module, "open_read", lambda path: BrakedHandle(real(path), brake))
    monkeypatch.setattr(confinement, "READ_CHUNK_BYTES", 64)


async def stop_at_the_brake(h: Harness, brake: Brake, tool: str, args: dict[str, Any]) -> str:
    """Run a turn whose round calls ``tool`` with ``args``, then ``later()``, until the
    brake holds the tool, check the loop ran on meanwhile, stop the turn; returns the first
    tool call's id."""
    h.server.enqueue(Turn.tool_calls(call(tool, args, id="c1"), later()))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    task = asyncio.create_task(h.agent.run_user_turn("go"))
    try:
        await wait_until(brake.reached.is_set, timeout=BRAKE_DEADLINE, what="the brake")
        assert not task.done()
        held_at = ticks
        await wait_until(lambda: ticks > held_at + 10, what="the loop to tick on")
        assert not brake.reached.wait(0) or not task.done()  # the tool is still held
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        ticking.cancel()
    assert not brake.on_loop, "the tool ran on the event loop"
    assert not brake.gave_up, "the tool was never stopped"
    for thread in threading.enumerate():
        if thread.name.startswith(THREAD_PREFIX):
            thread.join(5.0)
            assert not thread.is_alive(), f"{thread.name} still runs"
    assert h.log.of(TurnFinished)[-1].outcome is Outcome.STOPPED
    assert sorted(tool_call_ids(h.agent.messages)) == sorted(tool_result_ids(h.agent.messages))
    return str(tool_call_ids(h.agent.messages)[0])


def assert_interrupted(h: Harness, call_id: str) -> None:
    finished = {e.call_id: e for e in h.log.of(ToolFinished)}
    assert finished[call_id].status == "interrupted"
    assert finished[call_id].output == INTERRUPTED
    assert finished["later"].status == "not_executed"
    [saved] = [e for e in h.load().events if e.metadata.get("call_id") == call_id]
    assert saved.metadata["status"] == "interrupted"
    results = {m["tool_call_id"]: m["content"] for m in h.agent.messages if m["role"] == "tool"}
    assert results == {call_id: INTERRUPTED, "later": NOT_EXECUTED}


def later() -> dict[str, Any]:
    """A second call of the round, never run once the first is stopped."""
    return call("write_file", {"path": "later.txt", "content": "x"}, id="later")


def no_trace_of_writes(workspace: Path) -> None:
    assert not (workspace / "later.txt").exists()
    assert [p.name for p in workspace.rglob("*.tmp")] == []


# --- reading and listing ---------------------------------------------------------------


async def test_list_files_over_a_huge_tree_stops_within_one_entry(
    harness: Harness, signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    for d in range(20):
        (harness.workspace / f"d{d:02}").mkdir()
        for f in range(20):
            (harness.workspace / f"d{d:02}" / f"f{f:02}.txt").write_text("x")
    brake = Brake(at=50, signals=signals)
    monkeypatch.setattr(IgnoreMatcher, "is_ignored", brake.wrap(IgnoreMatcher.is_ignored))
    call_id = await stop_at_the_brake(harness, brake, "list_files", {"max_entries": 1000})
    assert_interrupted(harness, call_id)
    assert brake.after_stop == 0  # the next entry's check point ended the walk
    assert brake.steps == 50  # of 420 entries
    no_trace_of_writes(harness.workspace)


async def test_read_file_of_a_large_file_stops_between_pieces(
    harness: Harness, signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    (harness.workspace / "big.txt").write_text("line\n" * 5000)  # 25 000 bytes: allowed
    brake = Brake(at=3, signals=signals)
    braked_open(monkeypatch, brake, confinement)
    call_id = await stop_at_the_brake(harness, brake, "read_file", {"path": "big.txt"})
    assert_interrupted(harness, call_id)
    assert brake.after_stop == 0
    assert brake.steps == 3  # of 391 pieces of 64 bytes


async def test_read_file_range_of_a_long_file_stops_within_one_piece(
    harness: Harness, signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    (harness.workspace / "long.txt").write_text("".join(f"{n}\n" for n in range(10_000)))
    brake = Brake(at=100, signals=signals)
    braked_open(monkeypatch, brake, files)
    args = {"path": "long.txt", "start_line": 9000, "end_line": 9001}
    call_id = await stop_at_the_brake(harness, brake, "read_file_range", args)
    assert_interrupted(harness, call_id)
    assert brake.after_stop == 0
    assert brake.steps == 100  # the binary sniff, then 99 of some 760 pieces


@pytest.mark.parametrize("phase", ["walk", "files", "lines"])
async def test_the_python_search_stops_in_the_walk_between_files_and_within_a_file(
    harness: Harness, signals, monkeypatch: pytest.MonkeyPatch, phase: str
) -> None:
    monkeypatch.setattr(search, "find_ripgrep", lambda: None)  # the built-in search
    for d in range(10):
        (harness.workspace / f"d{d}").mkdir()
        for f in range(30):
            (harness.workspace / f"d{d}" / f"f{f:02}.txt").write_text("hay\n" * 200)
    brake = Brake(at=40, signals=signals)
    if phase == "walk":
        monkeypatch.setattr(IgnoreMatcher, "is_ignored", brake.wrap(IgnoreMatcher.is_ignored))
    elif phase == "files":
        monkeypatch.setattr(search, "open_read", brake.wrap(confinement.open_read))
    else:
        brake.at = 100  # within a file, in 64-byte pieces of its lines
        braked_open(monkeypatch, brake, search)
    call_id = await stop_at_the_brake(harness, brake, "search", {"query": "needle"})
    assert_interrupted(harness, call_id)
    assert brake.after_stop == 0


# --- writing: stopped before the write, nothing is written; during it, all is ----------


REPLACE_TEXT = {"path": "r.txt", "old_text": "target", "new_text": "changed"}


@pytest.mark.parametrize(
    ("tool", "args", "original", "reader"),
    [
        pytest.param(
            "write_file",
            {"path": "w.txt", "content": "new\n"},
            "old\n" * 2000,
            tool_edits,
            id="write_file",
        ),
        pytest.param(
            "replace_text",
            REPLACE_TEXT,
            "keep\n" * 2000 + "target\n",
            confinement,
            id="replace_text",
        ),
    ],
)
async def test_a_write_stopped_while_reading_the_old_content_writes_nothing(
    harness: Harness,
    signals,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    args: dict[str, str],
    original: str,
    reader: Any,
) -> None:
    """``reader``: the module whose open_read reads the file the tool changes."""
    path = harness.workspace / args["path"]
    path.write_text(original)
    brake = Brake(at=5, signals=signals)
    braked_open(monkeypatch, brake, reader)
    call_id = await stop_at_the_brake(harness, brake, tool, args)
    assert_interrupted(harness, call_id)
    assert path.read_text() == original
    assert not harness.agent.edits.has_undo()
    no_trace_of_writes(harness.workspace)


def two_file_patch() -> str:
    return (
        "--- a/one.txt\n+++ b/one.txt\n@@ -1,1 +1,1 @@\n-one\n+ONE\n"
        "--- a/two.txt\n+++ b/two.txt\n@@ -1,1 +1,1 @@\n-two\n+TWO\n"
    )


async def test_apply_patch_stopped_while_planning_changes_no_file(
    harness: Harness, signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    (harness.workspace / "one.txt").write_text("one\n")
    (harness.workspace / "two.txt").write_text("two\n")
    brake = Brake(at=2, signals=signals)  # the second file's read
    monkeypatch.setattr(confinement, "open_read", brake.wrap(confinement.open_read))
    patch_text = two_file_patch()
    call_id = await stop_at_the_brake(harness, brake, "apply_patch", {"patch": patch_text})
    assert_interrupted(harness, call_id)
    assert (harness.workspace / "one.txt").read_text() == "one\n"
    assert (harness.workspace / "two.txt").read_text() == "two\n"
    assert not harness.agent.edits.has_undo()
    no_trace_of_writes(harness.workspace)


async def test_a_stop_during_a_patch_write_lets_every_file_be_written_and_shows_it_done(
    harness: Harness, signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    (harness.workspace / "one.txt").write_text("one\n")
    (harness.workspace / "two.txt").write_text("two\n")
    brake = Brake(at=1, signals=signals)  # the first of the two writes
    monkeypatch.setattr(patch, "atomic_write", brake.wrap(confinement.atomic_write))
    patch_text = two_file_patch()
    call_id = await stop_at_the_brake(harness, brake, "apply_patch", {"patch": patch_text})

    assert (harness.workspace / "one.txt").read_text() == "ONE\n"
    assert (harness.workspace / "two.txt").read_text() == "TWO\n"
    assert brake.steps == 2  # both writes, the second after the stop
    finished = {e.call_id: e for e in harness.log.of(ToolFinished)}
    assert finished[call_id].status == "completed"
    assert finished[call_id].output.startswith("Applied patch: modified one.txt, modified")
    assert "+ONE" in finished[call_id].metadata["diff"]
    assert finished["later"].status == "not_executed"
    [saved] = [e for e in harness.load().events if e.metadata.get("call_id") == call_id]
    assert saved.metadata["status"] == "completed"
    plan = harness.agent.edits.plan_undo()  # the undo snapshot was kept
    assert plan is not None and {s.path for s in plan.steps} == {"one.txt", "two.txt"}
    assert not (harness.workspace / "later.txt").exists()


@pytest.mark.parametrize(
    ("tool", "args", "write", "original", "written", "said"),
    [
        pytest.param(
            "write_file",
            {"path": "w.txt", "content": "after\n"},
            "write_text",
            "before\n",
            "after\n",
            "Replaced w.txt (6 bytes",
            id="write_file",
        ),
        pytest.param(
            "replace_text",
            REPLACE_TEXT,
            "atomic_write",
            "keep\ntarget\n",
            "keep\nchanged\n",
            "Replaced 1 occurrence in r.txt at line 2",
            id="replace_text",
        ),
    ],
)
async def test_a_stop_during_the_write_lets_it_finish_and_shows_it_done(
    harness: Harness,
    signals,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    args: dict[str, str],
    write: str,
    original: str,
    written: str,
    said: str,
) -> None:
    """``write``: the function of zcoder.tools.files that the brake holds."""
    path = harness.workspace / args["path"]
    path.write_text(original)
    brake = Brake(at=1, signals=signals)
    monkeypatch.setattr(files, write, brake.wrap(getattr(files, write)))
    call_id = await stop_at_the_brake(harness, brake, tool, args)

    assert path.read_text() == written
    finished = {e.call_id: e for e in harness.log.of(ToolFinished)}
    assert finished[call_id].status == "completed"
    assert finished[call_id].output.startswith(said)
    assert finished["later"].status == "not_executed"
    plan = harness.agent.edits.plan_undo()
    assert plan is not None and [s.content for s in plan.steps] == [original.encode()]


async def test_a_stop_while_the_undo_snapshot_is_kept_writes_nothing(
    harness: Harness, signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    (harness.workspace / "w.txt").write_text("before\n")
    brake = Brake(at=1, signals=signals)
    store = harness.agent.edits.store
    monkeypatch.setattr(store, "put", brake.wrap(store.put))
    args = {"path": "w.txt", "content": "after\n"}
    call_id = await stop_at_the_brake(harness, brake, "write_file", args)
    assert_interrupted(harness, call_id)
    assert (harness.workspace / "w.txt").read_text() == "before\n"
    assert not harness.agent.edits.has_undo()
    no_trace_of_writes(harness.workspace)
