"""Tool work off the event loop, and how a stopped turn stops it.

The turn runs on the UI's event loop, so a tool that reads, walks or writes there would
freeze the screen for as long as the file system takes (a huge tree, a slow mount). Every
file tool therefore does its file-system work in a thread of its own, and the loop only
awaits the result.

A thread cannot be killed, so stopping is cooperative. Each call has a ``StopSignal``
(``ToolContext.stop``); when the turn is cancelled (Escape, Ctrl+C), the awaiting
coroutine sets it and the thread's loops, which call ``stop.check()`` per directory
entry, per file, per hunk or per megabyte read, raise ``ToolStopped`` at their next check.
The coroutine waits up to ``STOP_WAIT_SECONDS`` for the thread to end, then lets the
cancellation go on. A thread stuck in one system call past that (a stalled network file
system) is left behind: it is a daemon thread, its result is thrown away, and it can
change nothing, because the only writing step never runs after a cancellation that came
first (see below).

Writes are all or nothing. The planning phase (reading files, working out the new
content, the diff, the freshness check) is cancellable with ``in_thread``: a stop there
writes nothing. The writing phase (``to_completion``: the atomic renames and the /undo
journal record) has no check points: once it has started, a cancellation waits for it to
finish (up to ``COMMIT_WAIT_SECONDS``) and the tool returns its real result, so the call
shows as done, with its diff and undo snapshot; its stop signal is set all the same, and
the agent stops the turn right after recording the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Final, TypeVar

__all__ = [
    "COMMIT_WAIT_SECONDS",
    "STOP_WAIT_SECONDS",
    "StopSignal",
    "ToolStopped",
    "in_thread",
    "to_completion",
]

T = TypeVar("T")

STOP_WAIT_SECONDS: Final = 0.8
"""How long a stopped tool's thread gets to reach a check point and end; the turn then
stops whether it has or not (the 1-second promise of Escape, with some room)."""
COMMIT_WAIT_SECONDS: Final = 30.0
"""How long a cancellation waits for a write that has started (it is bounded by the size
of what is written: the tool's own arguments, or at most a few files of 8 MiB)."""
THREAD_PREFIX: Final = "zcoder-tool"
"""The name of every tool thread starts so (``zcoder-tool-read_file``)."""


class ToolStopped(Exception):
    """Raised at a check point of a tool whose call was stopped."""


class StopSignal:
    """A tool call's stop request, set from the event loop, read from the tool's thread."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """A check point: raise ToolStopped once the call was stopped."""
        if self._event.is_set():
            raise ToolStopped("the tool call was stopped")

    def wait(self, timeout: float) -> bool:
        """Block until the call is stopped or ``timeout`` seconds pass; True if stopped."""
        return self._event.wait(timeout)


def _start(fn: Callable[[], T], name: str) -> asyncio.Future[T]:
    """Run ``fn`` in a new daemon thread; its result or exception settles the future."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    # A result nobody waits for any more (the thread outlived its wait) is dropped quietly.
    future.add_done_callback(lambda done: done.cancelled() or done.exception())

    def settle_result(value: T) -> None:
        if not future.done():
            future.set_result(value)

    def settle_error(exc: BaseException) -> None:
        if not future.done():
            future.set_exception(exc)

    def body() -> None:
        try:
            value = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle_error, exc)
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle_result, value)

    thread = threading.Thread(target=body, name=f"{THREAD_PREFIX}-{name}", daemon=True)
    thread.start()
    return future


async def in_thread(stop: StopSignal, fn: Callable[[], T], *, name: str = "work") -> T:
    """``fn()`` in a thread; if the awaiting task is cancelled, ``stop`` is set and the
    thread gets ``STOP_WAIT_SECONDS`` to end before the cancellation goes on."""
    future = _start(fn, name)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait({future}, timeout=STOP_WAIT_SECONDS)  # a second cancel: gone
        raise


async def to_completion(stop: StopSignal, fn: Callable[[], T], *, name: str = "write") -> T:
    """``fn()`` (a write that must happen whole or not at all) in a thread, to its end.

    A cancellation while it runs sets ``stop``, waits for ``fn`` (up to
    ``COMMIT_WAIT_SECONDS``) and returns its result anyway, so the caller reports what was
    done; whoever runs the call sees ``stop`` set and stops the turn after recording it.
    """
    future = _start(fn, name)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        done, _ = await asyncio.wait({future}, timeout=COMMIT_WAIT_SECONDS)
        if not done:
            raise
        return future.result()
