"""Tool-call ids unique in their session.

A model server that sends no id gets one made up for it by the stream parser, numbered
within the reply (``call_0``, ``call_1``; ``recovered_0`` for a call the model wrote as
text), so every turn's first call would be ``call_0``; and a server's own ids are not
promised to be unique across turns either. An editor keys its tool-call cards by id (ACP
requires ids unique within a session: toad merged four turns' calls into one card), and
the history sent back to the model pairs each result with its call by id.

So before a reply's calls run, each gets an id not used before in the session: an id the
session already holds, or one the parser numbered, is replaced by a random one with the
same prefix. The history, the events every front end sees and the saved transcript then
all carry the new id. A server's own unique ids are kept as they are (some chat
templates check their shape).
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Iterable, Sequence
from typing import Any, Final

from zcoder.model import ToolCall

_NUMBERED: Final = re.compile(r"(call|recovered)_\d+")
"""The ids the stream parser and the recovery of written calls number per reply."""

_RANDOM_BYTES: Final = 6


def _fresh(prefix: str, used: set[str]) -> str:
    while True:
        candidate = f"{prefix}_{secrets.token_hex(_RANDOM_BYTES)}"
        if candidate not in used:
            return candidate


class CallIds:
    """The tool-call ids one session has used, and new ones unlike any of them."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def remember(self, messages: Iterable[dict[str, Any]]) -> None:
        """Count the ids a history holds (a resumed session's) as used."""
        for message in messages:
            for raw in message.get("tool_calls") or ():
                if isinstance(raw, dict) and isinstance(raw.get("id"), str):
                    self._used.add(raw["id"])

    def unique(self, calls: Sequence[ToolCall]) -> list[ToolCall]:
        """``calls`` with every id unused in this session (and within the reply)."""
        renamed: list[ToolCall] = []
        for call in calls:
            match = _NUMBERED.fullmatch(call.id)
            kept = call
            if match is not None or call.id in self._used:
                prefix = match.group(1) if match is not None else "call"
                kept = dataclasses.replace(call, id=_fresh(prefix, self._used))
            self._used.add(kept.id)
            renamed.append(kept)
        return renamed
