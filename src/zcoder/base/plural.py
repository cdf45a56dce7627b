"""Counted nouns in text for people: ``1 line``, ``2 lines``, ``1,024 bytes``.

The one place a count and its noun are put together, so no message says ``1 skills`` or
``1 file(s)``. Imports nothing of zcoder: every part of it (relay/ included) may use it.
"""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``noun`` as it goes with ``count``: itself for exactly one, else ``many`` (by
    default ``noun`` + "s"). For the noun alone: ``f"unknown {plural(n, 'argument')}"``."""
    if count == 1:
        return noun
    return many if many is not None else noun + "s"


def counted(count: int, noun: str, many: str | None = None) -> str:
    """``count`` (with thousands separators) and its noun: ``counted(1, "line")`` is
    "1 line", ``counted(1500, "match", "matches")`` "1,500 matches"; ``noun`` may hold
    words before the noun itself ("earlier line")."""
    return f"{count:,} {plural(count, noun, many)}"


def byte_size(count: int) -> str:
    """A byte count as people read it: ``4 MiB``, ``1.5 MiB``, ``640 KiB``, ``12 bytes``."""
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if count >= scale:
            return f"{count / scale:.1f}".removesuffix(".0") + f" {unit}"
    return counted(count, "byte")
