"""Python's garbage collector, tuned so it does not stall keystrokes while a reply streams.

Textual makes many objects per frame (strips, segments, their caches), and a streaming
reply keeps some of them alive, so the heap grows and Python's full (generation 2)
collections come often and walk all of it. Measured in a pty with a reply at 200 chunks a
second (bench/app_bench.py), a 30-second stream ran about a dozen full collections of up to
140 ms each, and a key typed during one waits for it: they made the slowest echoes.

The collector is off during start-up (zcoder.cli turns it off before the UI is imported:
start-up makes long-lived objects only, and a full collection in the middle of the first
frame delayed it by 20-30 ms). Once the app is up, the objects made so far (modules,
classes, the widgets of the screen) are moved out of the collector's sight with
``gc.freeze()``, the collector is turned on again, and full collections wait for ten times
as many younger collections as by default. Younger generations are collected as usual, and
so is the garbage made before the freeze (collected just before it).
"""

from __future__ import annotations

import gc
from typing import Final

__all__ = ["FULL_COLLECTION_EVERY", "tune_collector"]

FULL_COLLECTION_EVERY: Final = 100
"""Generation-1 collections between two full ones (Python's default is 10)."""


def tune_collector() -> None:
    """Call once the app is up: collect, freeze what start-up made, space full collections,
    and collect again from then on (also when start-up had turned the collector off)."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
    gc.enable()
