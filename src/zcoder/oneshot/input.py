"""Standard input for ``--prompt``: ``cat log | zcoder --prompt "explain"`` and
``zcoder --prompt - < task.md``.

Standard input is read only when it is not a terminal. With a prompt given, what was
piped in goes after it, in a fenced block labelled with its size (and where it was cut,
past ``STDIN_LIMIT`` bytes); with ``--prompt -`` it is the prompt itself. Nothing piped
in (``</dev/null``, an empty pipe) adds nothing. Reading stops at the limit: an endless
producer (``yes | zcoder ...``) is counted up to ``STDIN_COUNT_LIMIT`` bytes and then left.

A parent process may leave zcoder a pipe that it never writes nor closes (a CI step, an
editor's task runner). With a prompt given, standard input that sends nothing for
``ZCODER_STDIN_WAIT`` seconds (``DEFAULT_STDIN_WAIT``) is left, with a note on stderr, and
so is input that pauses that long after sending something (``tail -f``): what arrived is
used. With ``--prompt -`` zcoder waits for the end of the input, saying once that it does.
"""

from __future__ import annotations

import os
import select
import sys
from dataclasses import dataclass
from typing import BinaryIO, Final, TextIO

from zcoder.options import DEFAULT_STDIN_WAIT, STDIN_WAIT_SETTING

__all__ = [
    "DEFAULT_STDIN_WAIT",
    "STDIN_COUNT_LIMIT",
    "STDIN_LIMIT",
    "STDIN_WAIT_SETTING",
    "PipedInput",
    "prompt_with_input",
    "read_piped_input",
]

STDIN_LIMIT: Final = 256 * 1024
"""The most bytes of standard input given to the model (about 64,000 tokens at most)."""
STDIN_COUNT_LIMIT: Final = 64 * 1024 * 1024
"""Past the limit, input is only counted, up to this many bytes, then left unread."""
_CHUNK: Final = 64 * 1024


@dataclass(frozen=True)
class PipedInput:
    """What standard input held: ``data`` (at most ``STDIN_LIMIT`` bytes) and how many
    bytes it had in all (``total``; ``counted_all`` False when counting stopped)."""

    data: bytes
    total: int
    counted_all: bool = True
    left_open: bool = False
    """The input paused for the wait and was left open: ``data`` is what came before."""

    @property
    def truncated(self) -> bool:
        return self.total > len(self.data)

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")

    def label(self) -> str:
        """``standard input (1,234 bytes)``, or ``(N bytes, truncated at M)``."""
        size = f"{self.total:,} bytes" if self.counted_all else f"more than {self.total:,} bytes"
        if self.left_open:
            size += ", then it stayed open and sent nothing more"
        if self.truncated:
            return f"standard input ({size}, truncated at {len(self.data):,})"
        return f"standard input ({size})"


def read_piped_input(
    stream: BinaryIO | None = None,
    *,
    err: TextIO | None = None,
    limit: int = STDIN_LIMIT,
    wait: float = DEFAULT_STDIN_WAIT,
    to_the_end: bool = False,
) -> PipedInput | None:
    """Standard input when it is not a terminal; None when it is one, cannot be read, or
    (unless ``to_the_end``) sent nothing for ``wait`` seconds (see the module docstring)."""
    if stream is None:
        stream = getattr(sys.stdin, "buffer", None)
    try:
        if stream is None or stream.isatty():
            return None
        fd = stream.fileno()
    except (OSError, ValueError):  # closed, or replaced by something without a descriptor
        return None
    err = err if err is not None else sys.stderr
    kept = bytearray()
    total = 0
    try:
        while total <= STDIN_COUNT_LIMIT:
            if not _readable_within(fd, wait):
                if to_the_end:
                    if total == 0:
                        _say(err, "zcoder: waiting for the prompt on standard input "
                             "(end it with Ctrl+D)")  # fmt: skip
                    _readable_within(fd, None)
                elif total == 0:
                    _say(err, f"zcoder: standard input sent nothing for {wait:g} seconds; going "
                         f"on without it ({STDIN_WAIT_SETTING} waits longer, </dev/null skips "
                         "the wait)")  # fmt: skip
                    return None
                else:
                    return PipedInput(bytes(kept), total, left_open=True)
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return PipedInput(bytes(kept), total)
            if len(kept) < limit:
                kept += chunk[: limit - len(kept)]
            total += len(chunk)
        return PipedInput(bytes(kept), total, counted_all=False)
    except OSError:
        return None


def _readable_within(fd: int, seconds: float | None) -> bool:
    """Whether ``fd`` has data or its end within ``seconds`` (None: however long)."""
    try:
        readable, _, _ = select.select([fd], [], [], seconds)
    except ValueError:
        return True  # not selectable: a plain read will tell
    return bool(readable)


def _say(err: TextIO, text: str) -> None:
    err.write(text + "\n")
    err.flush()


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def prompt_with_input(prompt: str, piped: PipedInput | None) -> str:
    """The prompt, with what was piped in after it in a labelled block (if anything)."""
    if piped is None or piped.total == 0:
        return prompt
    text = piped.text
    fence = _fence(text)
    ending = "" if text.endswith("\n") else "\n"
    return f"{prompt}\n\n{piped.label()}:\n{fence}\n{text}{ending}{fence}"
