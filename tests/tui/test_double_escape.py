"""When Escape opens /rewind (tui/state/double_escape.py), on an injected clock."""

from __future__ import annotations

from zcoder.tui.state.double_escape import DoubleEscape


def primed(escapes: DoubleEscape) -> bool:
    return escapes.primed  # read through a call: each assert reads it anew


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_two_presses_that_count_within_the_window_open_it() -> None:
    clock = Clock()
    escapes = DoubleEscape(window=1.0, clock=clock)
    assert not escapes.press(counts=True) and primed(escapes)
    clock.now += 0.5
    assert escapes.press(counts=True) and not primed(escapes)
    assert not escapes.press(counts=True)  # a third press starts again


def test_a_press_that_does_not_count_or_comes_late_only_primes_again() -> None:
    clock = Clock()
    escapes = DoubleEscape(window=1.0, clock=clock)
    assert not escapes.press(counts=False)  # it stopped a turn, say
    assert not escapes.press(counts=True)
    assert not escapes.press(counts=False)  # a draft was typed meanwhile
    assert not escapes.press(counts=True)
    clock.now += 1.5
    assert not escapes.press(counts=True) and primed(escapes)
