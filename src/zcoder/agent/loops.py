"""Loop detection: the same tool round (names, arguments and results) again and again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

WARN_AFTER: Final = 3


def _calls_key(calls: Sequence[tuple[str, dict[str, Any]]]) -> str:
    return json.dumps([[name, args] for name, args in calls], sort_keys=True, default=str)


class LoopDetector:
    """Counts identical consecutive rounds; warns at three, then refuses a fourth."""

    def __init__(self) -> None:
        self._last: tuple[str, str] | None = None
        self._repeats = 0
        self._warned_calls: str | None = None

    def should_refuse(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> bool:
        """Whether this round repeats a round the model was already warned about."""
        return self._warned_calls is not None and _calls_key(calls) == self._warned_calls

    def record(self, calls: Sequence[tuple[str, dict[str, Any]]], results: Sequence[str]) -> bool:
        """Record a finished round; True when it is the third identical one in a row."""
        key = (_calls_key(calls), json.dumps(list(results)))
        if key == self._last:
            self._repeats += 1
        else:
            self._last = key
            self._repeats = 1
            self._warned_calls = None
        if self._repeats >= WARN_AFTER and self._warned_calls is None:
            self._warned_calls = key[0]
            return True
        return False
