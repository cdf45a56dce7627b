"""The model's plan: a short checklist it keeps with ``update_plan`` (tools/plan_tool.py).

Each call sends the whole list; an item is a line of text and a status (pending, in
progress, done), at most one in progress. This module is the plan itself: checking what
the model sent, and the plain-text forms of it (one line, the tool's answer, the record
the model reads after a compaction; the TUI's checklist is tui/widgets/plan_view.py). It
imports nothing of zcoder but the sanitizer, so a front end can draw a plan without
loading the tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from zcoder.base.sanitize import visible

__all__ = [
    "MAX_PLAN_ITEMS",
    "MAX_PLAN_ITEM_CHARS",
    "PLAN_RECORD_OPEN",
    "UPDATE_PLAN_TOOL",
    "Plan",
    "PlanError",
    "PlanItem",
    "PlanStatus",
    "is_plan_record",
]

UPDATE_PLAN_TOOL: Final = "update_plan"
"""The tool the model keeps its plan with (tools/plan_tool.py)."""

MAX_PLAN_ITEMS: Final = 20
"""Items a plan may have: a plan is steps to keep track of, not a backlog."""
MAX_PLAN_ITEM_CHARS: Final = 200
"""Characters an item's text may have: one line of what to do."""

PLAN_RECORD_OPEN: Final = "[zcoder] Your plan"
"""How the record of the plan that follows a compaction's summary begins."""


class PlanError(ValueError):
    """What the model sent is not a plan; the message says what to send instead."""


class PlanStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"


_MARKS: Final = {PlanStatus.PENDING: "[ ]", PlanStatus.IN_PROGRESS: "[>]", PlanStatus.DONE: "[x]"}
"""The checkbox each status's line starts with, where the plan is text (for the model)."""


@dataclass(frozen=True)
class PlanItem:
    text: str
    status: PlanStatus

    def line(self) -> str:
        return f"{_MARKS[self.status]} {self.text}"


@dataclass(frozen=True)
class Plan:
    """A plan, checked: at most MAX_PLAN_ITEMS items, at most one in progress."""

    items: tuple[PlanItem, ...] = ()

    @classmethod
    def from_arguments(cls, items: object) -> Plan:
        """The plan ``update_plan``'s ``items`` describe; PlanError says what is wrong."""
        if not isinstance(items, list):
            raise PlanError("items must be a list of {text, status}")
        if len(items) > MAX_PLAN_ITEMS:
            raise PlanError(
                f"a plan has at most {MAX_PLAN_ITEMS} items ({len(items)} sent): merge steps"
            )
        checked = tuple(_item(number, item) for number, item in enumerate(items, 1))
        running = [item.text for item in checked if item.status is PlanStatus.IN_PROGRESS]
        if len(running) > 1:
            raise PlanError(
                f"{len(running)} items are in_progress; at most one may be: mark the others "
                "pending or done"
            )
        return cls(checked)

    @classmethod
    def from_saved(cls, saved: Mapping[str, Any] | None) -> Plan:
        """The plan a session saved (``to_saved``); an empty one when none or unreadable
        (a saved plan is the program's own record: nothing to correct)."""
        if not saved:
            return cls()
        try:
            return cls.from_arguments(saved.get("items"))
        except PlanError:
            return cls()

    @classmethod
    def from_record(cls, text: str) -> Plan:
        """The plan a ``record`` states (an empty one when the text is not one)."""
        statuses = {mark: status for status, mark in _MARKS.items()}
        items = [
            {"text": line[4:], "status": statuses[line[:3]]}
            for line in text.splitlines()[1:]
            if line[:3] in statuses
        ]
        try:
            return cls.from_arguments(items)
        except PlanError:
            return cls()

    def to_saved(self) -> dict[str, Any]:
        return {"items": self.to_list()}

    def to_list(self) -> list[dict[str, str]]:
        """The items as JSON: ``[{"text": ..., "status": ...}, ...]``."""
        return [{"text": item.text, "status": item.status.value} for item in self.items]

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def done(self) -> int:
        return sum(item.status is PlanStatus.DONE for item in self.items)

    @property
    def current(self) -> PlanItem | None:
        """The item in progress, if any."""
        return next((i for i in self.items if i.status is PlanStatus.IN_PROGRESS), None)

    def progress(self) -> str:
        """``2/5 done``."""
        return f"{self.done}/{len(self.items)} done"

    def one_line(self) -> str:
        """The plan on one line: ``Plan 2/5 ✓ · now: write tests`` (screen-safe)."""
        if not self.items:
            return "Plan cleared"
        head = f"Plan {self.done}/{len(self.items)} ✓"
        if (current := self.current) is not None:
            return f"{head} · now: {visible(current.text)}"
        following = next((i for i in self.items if i.status is PlanStatus.PENDING), None)
        if following is not None:
            return f"{head} · next: {visible(following.text)}"
        return f"{head} · all done"

    def for_model(self) -> str:
        """What ``update_plan`` answers: short, the progress and what is in progress."""
        if not self.items:
            return "Plan cleared."
        current = self.current
        now = f" In progress: {current.text}" if current is not None else ""
        return f"Plan updated: {self.progress()}.{now}"

    def record(self) -> str:
        """The model's plan as a context record (after a compaction's summary)."""
        return (
            f"{PLAN_RECORD_OPEN} ({self.progress()}; [x] done, [>] in progress, [ ] pending;"
            f" send update_plan to change it):\n" + "\n".join(item.line() for item in self.items)
        )


_STATUS_SLIPS: Final = {
    "in progress": "in_progress",
    "in-progress": "in_progress",
    "inprogress": "in_progress",
    "completed": "done",
    "complete": "done",
    "todo": "pending",
}
"""Statuses models send from other tools' habits (Codex's and Claude Code's todo lists
say ``completed``), taken as what they mean."""


def _item(number: int, item: object) -> PlanItem:
    if not isinstance(item, dict):
        raise PlanError(f"item {number} must be an object with text and status")
    text, status = item.get("text"), item.get("status")
    if not isinstance(text, str) or not text.strip():
        raise PlanError(f"item {number} needs a non-empty text")
    text = " ".join(text.split())
    if len(text) > MAX_PLAN_ITEM_CHARS:
        raise PlanError(
            f"item {number} is {len(text)} characters; at most {MAX_PLAN_ITEM_CHARS}: "
            "say the step in one line"
        )
    try:
        if not isinstance(status, str):
            raise ValueError(status)
        return PlanItem(text, PlanStatus(_STATUS_SLIPS.get(status.strip().lower(), status)))
    except ValueError:
        allowed = ", ".join(s.value for s in PlanStatus)
        raise PlanError(f"item {number}'s status is {status!r}; use one of {allowed}") from None


def is_plan_record(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and str(message.get("content", "")).startswith(
        PLAN_RECORD_OPEN
    )
