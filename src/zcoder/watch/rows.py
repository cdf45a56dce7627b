"""The rows ``zcoder agents --watch`` shows, with no Textual: who, doing what, where.

Agents waiting for their user (a question open) come first, then the others by name. All
text is the peers' own (self-reported) made visible (zcoder.relay.doing, visible).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from zcoder.base.sanitize import bounded, visible
from zcoder.relay import ACTIVITY_WAITING_FOR_APPROVAL, Peer, display_names, doing

COLUMNS: Final = ("NAME", "ACTIVITY", "WORKSPACE")
MAX_WORKSPACE_CHARS: Final = 120


@dataclass(frozen=True)
class Row:
    instance_id: str
    name: str
    activity: str  # what it does and for how long, or its state when it says nothing
    workspace: str
    pane: str  # its tmux pane ("" when it recorded none)
    pid: int
    waiting: bool  # a question waits for its user

    @property
    def cells(self) -> tuple[str, str, str]:
        return (self.name, self.activity, self.workspace)


def watch_rows(peers: Sequence[Peer], now: float | None = None) -> list[Row]:
    """One row a live peer, those waiting for their user first."""
    names = display_names(peers)
    moment = time.time() if now is None else now
    rows = [
        Row(
            instance_id=peer.instance_id,
            name=names[peer.instance_id],
            activity=doing(peer, moment) or visible(peer.state),
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


def fit_workspaces(rows: Sequence[Row], width: int) -> list[Row]:
    """The rows with each workspace cut to what ``width`` columns leave after the name and
    activity columns, keeping its end (the part that tells two apart)."""
    used = (
        sum(
            max(len(title), *(len(row.cells[n]) for row in rows)) + CELL_PADDING
            for n, title in enumerate(COLUMNS[:2])
        )
        if rows
        else 0
    )
    room = max(MIN_WORKSPACE_CHARS, width - used - CELL_PADDING - 1)  # 1: the scroll bar
    return [replace(row, workspace=bounded(row.workspace, room, keep_end=True)) for row in rows]
