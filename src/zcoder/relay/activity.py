"""What an instance is doing: its manifest's ``activity``, ``activity_since``,
``tmux_pane``, ``queued``, ``last_receipt`` and ``last_receipt_at`` members (issue 29),
written and read.

``state`` keeps the design's three values (ready, busy, paused), which zcoder.zsh reads;
``activity`` says more, as one of a closed set of short texts: ``idle``, ``thinking``,
``running a command``, ``waiting for approval`` or ``holding N messages`` (N ≥ 1, "1
message"). ``activity_since`` is when it became so (epoch seconds). ``tmux_pane`` is the
``$TMUX_PANE`` zcoder runs in (``%<digits>``), so ``zcoder agents --watch`` can switch to
it. ``queued`` counts the accepted messages waiting their turn to run (neither running
nor held: the held ones are in ``activity``). ``last_receipt`` is the last receipt it
received for a task it sent (``completed from web``: outcome and the peer's name, at most
MAX_RECEIPT_CHARS), ``last_receipt_at`` when (epoch seconds). All are flat scalars after
the spec's members, written by zcoder's own process on a change only (never on the
listener's enqueue path); zcoder.zsh ignores them.

A manifest is written by its owner, so what is read from others is self-reported: an
activity outside the set is still shown (a later zcoder may say more), made visible and
cut to MAX_ACTIVITY_CHARS by whoever shows it, and so is a last receipt (within
MAX_RECEIPT_CHARS); an odd ``tmux_pane``, ``queued`` or time is dropped.
"""

from __future__ import annotations

import re
from typing import Final

from zcoder.base.plural import counted
from zcoder.base.sanitize import bounded

ACTIVITY_IDLE: Final = "idle"
ACTIVITY_THINKING: Final = "thinking"
ACTIVITY_RUNNING_COMMAND: Final = "running a command"
ACTIVITY_WAITING_FOR_APPROVAL: Final = "waiting for approval"

MAX_ACTIVITY_CHARS: Final = 40
MAX_RECEIPT_CHARS: Final = 80
MAX_QUEUED: Final = 2**31  # far above any spool's bound (ZCODER_RELAY_MAX_QUEUE)
_TMUX_PANE: Final = re.compile(r"%[0-9]{1,9}")


def holding(count: int) -> str:
    """``holding 3 messages``: idle, with messages held for the user's decision."""
    return f"holding {counted(count, 'message')}"


def read_activity(value: object) -> str:
    """A manifest's ``activity`` as read from another instance: any string up to
    MAX_ACTIVITY_CHARS (shown made visible), else ``""`` (not said)."""
    return value if isinstance(value, str) and len(value) <= MAX_ACTIVITY_CHARS else ""


def read_since(value: object) -> int:
    """``activity_since``: non-negative epoch seconds, else 0 (not said)."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**40
    return value if ok else 0  # type: ignore[return-value]


def pane_id(value: object) -> str:
    """A tmux pane id (``%12``), else ``""``: the ``$TMUX_PANE`` recorded, or read."""
    return value if isinstance(value, str) and _TMUX_PANE.fullmatch(value) else ""


def read_queued(value: object) -> int | None:
    """``queued``: a count from 0 below MAX_QUEUED, else None (not said)."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_QUEUED
    return value if ok else None  # type: ignore[return-value]


def read_receipt(value: object) -> str:
    """``last_receipt``: any string up to MAX_RECEIPT_CHARS (shown made visible), else
    ``""`` (not said)."""
    return value if isinstance(value, str) and len(value) <= MAX_RECEIPT_CHARS else ""


def receipt_note(outcome: str, peer: str) -> str:
    """``completed from web``: a receipt received, as this instance publishes it."""
    return bounded(f"{outcome} from {peer}", MAX_RECEIPT_CHARS)


def _lasted(since: int, now: float) -> str:
    """``2m``: the time since ``since``, in one unit; ``""`` when unknown."""
    if since <= 0 or now < since:
        return ""
    seconds = int(now - since)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def for_how_long(since: int, now: float) -> str:
    """``for 2m``: how long an activity has lasted, in one unit; ``""`` when unknown."""
    lasted = _lasted(since, now)
    return f"for {lasted}" if lasted else ""


def receipt_words(receipt: str, at: int, now: float) -> str:
    """``completed from web, 3m ago``; raw text (make it visible before it is shown)."""
    if not receipt:
        return ""
    lasted = _lasted(at, now)
    return f"{receipt}, {lasted} ago" if lasted else receipt


def activity_words(activity: str, since: int, now: float) -> str:
    """``running a command for 2m``; raw text (make it visible before it is shown)."""
    if not activity:
        return ""
    lasted = for_how_long(since, now)
    return f"{activity} {lasted}" if lasted else activity


def activity_members(activity: str, since: int, pane: str) -> dict[str, str | int]:
    """The manifest's members for these, in order; none of them when not known."""
    members: dict[str, str | int] = {}
    if activity:
        members |= {"activity": activity, "activity_since": since}
    if pane:
        members["tmux_pane"] = pane
    return members


def backlog_members(queued: int | None, receipt: str, at: int) -> dict[str, str | int]:
    """The manifest's ``queued``, ``last_receipt`` and ``last_receipt_at``, in order; none
    of them when not known."""
    members: dict[str, str | int] = {}
    if queued is not None:
        members["queued"] = queued
    if receipt:
        members |= {"last_receipt": receipt, "last_receipt_at": at}
    return members
