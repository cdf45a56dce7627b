"""Bounding tool output: keep the head and the tail, say how much was left out."""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = [
    "DEFAULT_MAX_TOOL_OUTPUT",
    "MAX_TOOL_OUTPUT_ENV",
    "HeadTailBuffer",
    "bound_text",
    "max_tool_output_from_env",
]

DEFAULT_MAX_TOOL_OUTPUT = 32768
"""Default bound for the text one tool call returns to the model, in bytes."""

MAX_TOOL_OUTPUT_ENV = "ZCODER_MAX_TOOL_OUTPUT"
_MIN_TOOL_OUTPUT = 1024


def max_tool_output_from_env(environ: Mapping[str, str] | None = None) -> int:
    """``ZCODER_MAX_TOOL_OUTPUT`` as an int, or the default when unset or invalid.

    Values below 1024 are raised to 1024 so a bound can always hold its own marker.
    """
    env = os.environ if environ is None else environ
    try:
        value = int(env.get(MAX_TOOL_OUTPUT_ENV, ""))
    except ValueError:  # unset, empty or not a number
        return DEFAULT_MAX_TOOL_OUTPUT
    return max(value, _MIN_TOOL_OUTPUT) if value > 0 else DEFAULT_MAX_TOOL_OUTPUT


def _marker(omitted: int) -> str:
    return f"\n… {omitted} bytes omitted …\n"


def _join(head: bytes, tail: bytes, omitted: int) -> str:
    # errors="ignore" drops a multi-byte character cut in half at either seam.
    return (
        head.decode("utf-8", errors="ignore")
        + _marker(omitted)
        + tail.decode("utf-8", errors="ignore")
    )


def bound_text(text: str, limit: int) -> str:
    """Return ``text`` unchanged if its UTF-8 form fits in ``limit`` bytes, else head + tail.

    The middle is replaced by a line ``… N bytes omitted …``; the result (marker included)
    is at most about ``limit`` bytes.
    """
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text
    budget = max(limit - len(_marker(len(data)).encode()), 2)
    head_len = budget // 2
    tail_len = budget - head_len
    omitted = len(data) - head_len - tail_len
    return _join(data[:head_len], data[len(data) - tail_len :], omitted)


class HeadTailBuffer:
    """Collects a byte stream of any size, keeping only its first and last bytes."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            excess = len(self._tail) - self._tail_limit
            if excess > 0:
                del self._tail[:excess]

    def text(self) -> str:
        omitted = self.total - len(self._head) - len(self._tail)
        if omitted <= 0:
            return (bytes(self._head) + bytes(self._tail)).decode("utf-8", errors="replace")
        return _join(bytes(self._head), bytes(self._tail), omitted)
