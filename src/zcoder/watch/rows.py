"""The rows ``zcoder agents --watch`` shows, with no Textual: who, doing what, with how
many messages waiting, the last receipt it got, where.

Agents waiting for their user (a question open) come first, then the others by name. All
text is the peers' own (self-reported) made visible (zcoder.relay.doing, queue,
last_receipt, visible). A narrow terminal drops the last receipt first, then the queue,
and cuts the workspace to the room left, keeping its end.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from zcoder.base.sanitize import bounded, visible
from zcoder.relay import (
    ACTIVITY_WAITING_FOR_APPROVAL,
    Peer,
    display_names,
    doing,
    last_receipt,
    queue,
)

COLUMNS: Final = ("NAME", "ACTIVITY", "QUEUE", "LAST RECEIPT", "WORKSPACE")
DROPPED_FIRST: Final = ("LAST RECEIPT", "QUEUE")  # what a narrow terminal goes without
MAX_WORKSPACE_CHARS: Final = 120
MAX_RECEIPT_CELL_CHARS: Final = 48


@dataclass(frozen=True)
class Row:
    instance_id: str
    name: str
    activity: str  # what it does and for how long, or its state when it says nothing
    queue: str  # messages waiting their turn there ("-": it says nothing)
    receipt: str  # the last receipt it received and how long ago ("" when none)
    workspace: str
    pane: str  # its tmux pane ("" when it recorded none)
    pid: int
    waiting: bool  # a question waits for its user

    @property
    def cells(self) -> tuple[str, ...]:
        """Its cells, one per COLUMNS."""
        return (self.name, self.activity, self.queue, self.receipt, self.workspace)

    def shown(self, columns: Sequence[str]) -> tuple[str, ...]:
        """Its cells for ``columns`` (some of COLUMNS, in their order)."""
        return tuple(self.cells[COLUMNS.index(title)] for title in columns)


def watch_rows(peers: Sequence[Peer], now: float | None = None) -> list[Row]:
    """One row a live peer, those waiting for their user first."""
    names = display_names(peers)
    moment = time.time() if now is None else now
    rows = [
        Row(
            instance_id=peer.instance_id,
            name=names[peer.instance_id],
            activity=doing(peer, moment) or visible(peer.state),
            queue=queue(peer),
            receipt=bounded(last_receipt(peer, moment), MAX_RECEIPT_CELL_CHARS),
            workspace=bounded(visible(peer.workspace), MAX_WORKSPACE_CHARS, keep_end=True),
            pane=peer.tmux_pane,
            pid=peer.pid,
            waiting=peer.activity == ACTIVITY_WAITING_FOR_APPROVAL,
        )
        for peer in peers
    ]
    return sorted(rows, key=lambda row: (not row.waiting, row.name.casefold(), row.pid))


CELL_PADDING: Final = 2  # a table cell's padding, one column each side
MIN_WORKSPACE_CHARS: Final = 12


def fit_columns(rows: Sequence[Row], width: int) -> tuple[tuple[str, ...], list[Row]]:
    """The columns that fit in ``width`` (DROPPED_FIRST goes, in its order, while the
    workspace would have less than MIN_WORKSPACE_CHARS), and the rows with each workspace
    cut to the room left, keeping its end (the part that tells two apart)."""

    def used(columns: Sequence[str]) -> int:
        return sum(
            max(len(title), *(len(row.shown([title])[0]) for row in rows), 0) + CELL_PADDING
            for title in columns
            if title != "WORKSPACE"
        )

    def room(columns: Sequence[str]) -> int:
        return width - used(columns) - CELL_PADDING - 1  # 1: the scroll bar

    columns = list(COLUMNS)
    for title in DROPPED_FIRST:
        if room(columns) >= MIN_WORKSPACE_CHARS:
            break
        columns.remove(title)
    left = max(MIN_WORKSPACE_CHARS, room(columns))
    fitted = [replace(row, workspace=bounded(row.workspace, left, keep_end=True)) for row in rows]
    return tuple(columns), fitted
