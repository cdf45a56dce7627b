"""tools/offload.py: tool work in a thread, stopped cooperatively; writes run to their end.

Threads are held by events the test controls, never by sleeps, so the order of events is
what is asserted, not how long anything took.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from zcoder.tools import offload
from zcoder.tools.offload import StopSignal, ToolStopped, in_thread, to_completion

DEADLINE = 10.0  # only a broken implementation waits this long


async def test_in_thread_returns_the_result_from_another_thread() -> None:
    names: list[str] = []

    def work() -> int:
        names.append(threading.current_thread().name)
        return 42

    assert await in_thread(StopSignal(), work, name="read_file") == 42
    assert names == ["zcoder-tool-read_file"]


async def test_in_thread_raises_what_the_work_raised() -> None:
    def work() -> None:
        raise FileNotFoundError("gone")

    with pytest.raises(FileNotFoundError, match="gone"):
        await in_thread(StopSignal(), work)


async def test_a_cancellation_sets_the_stop_and_waits_for_the_thread_to_end() -> None:
    stop = StopSignal()
    started = threading.Event()
    steps_after_stop: list[int] = []

    def work() -> None:
        started.set()
        step = 0
        while True:
            step += 1
            if stop.is_set():
                steps_after_stop.append(step)
            stop.check()
            stop.wait(DEADLINE)  # one "slow entry" at a time, until stopped

    task = asyncio.create_task(in_thread(stop, work))
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stop.is_set()
    assert len(steps_after_stop) == 1  # ended at its first check point after the stop
    for thread in threading.enumerate():
        if thread.name.startswith(offload.THREAD_PREFIX):
            thread.join(DEADLINE)  # it has returned; only its last bytecodes may be left
            assert not thread.is_alive()


async def test_a_thread_stuck_past_the_deadline_is_left_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(offload, "STOP_WAIT_SECONDS", 0.05)
    stuck = threading.Event()  # a system call that does not return until the test says so
    started = threading.Event()
    threads: list[threading.Thread] = []

    def work() -> str:
        threads.append(threading.current_thread())
        started.set()
        stuck.wait(DEADLINE)
        return "too late"

    task = asyncio.create_task(in_thread(StopSignal(), work))
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [thread] = threads
    assert thread.is_alive() and thread.daemon  # never blocks the program's exit
    stuck.set()
    thread.join(DEADLINE)
    assert not thread.is_alive()


async def test_a_write_cancelled_while_it_runs_finishes_and_returns_its_result() -> None:
    stop = StopSignal()
    started = threading.Event()
    go_on = threading.Event()
    written: list[str] = []

    def write() -> str:
        started.set()
        go_on.wait(DEADLINE)
        written.append("whole")
        return "done"

    task = asyncio.create_task(to_completion(stop, write))
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    while not stop.is_set():  # the cancellation reached it; the write still runs
        await asyncio.sleep(0.01)
    assert not task.done() and written == []
    go_on.set()
    assert await task == "done"
    assert written == ["whole"]


async def test_stop_check_raises_only_once_stopped() -> None:
    stop = StopSignal()
    stop.check()
    stop.set()
    with pytest.raises(ToolStopped):
        stop.check()
