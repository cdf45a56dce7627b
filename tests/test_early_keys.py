"""zcoder.early_keys on a real pseudo-terminal: held, the settings kept, given back."""

from __future__ import annotations

import os
import termios
from collections.abc import Iterator

import pytest

from zcoder import early_keys


@pytest.fixture
def pty() -> Iterator[tuple[int, int]]:
    master, slave = os.openpty()
    try:
        yield master, slave
    finally:
        early_keys.release()
        os.close(master)
        os.close(slave)


def test_hold_turns_echo_and_line_editing_off_and_release_gives_them_back(
    pty: tuple[int, int],
) -> None:
    master, slave = pty
    before = termios.tcgetattr(slave)
    assert before[3] & termios.ECHO and before[3] & termios.ICANON
    assert early_keys.hold(slave)
    held = termios.tcgetattr(slave)[3]
    assert not held & termios.ECHO and not held & termios.ICANON
    assert held & termios.ISIG  # Ctrl+C still interrupts the start
    assert early_keys.original() == before
    assert not early_keys.hold(slave)  # once
    os.write(master, b"typed\x7f early")
    assert os.read(slave, 100) == b"typed\x7f early"  # byte for byte, no line editing
    early_keys.release()
    assert termios.tcgetattr(slave) == before
    assert early_keys.original() is None
    early_keys.release()  # idempotent


def test_no_terminal_no_hold(tmp_path) -> None:
    with open(tmp_path / "file", "w") as file:
        assert not early_keys.hold(file.fileno())
    assert early_keys.original() is None
