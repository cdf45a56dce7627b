"""The history of relayed messages a workspace's sessions sent and received (/inbox).

One row per message and direction, updated as the message moves on: a received one is
``queued`` or ``held`` when accepted, ``running`` while its turn runs, then ``done``,
``cancelled`` or ``refused``; a sent one is ``accepted`` (or what the receiver answered:
``paused``, ``full``...) and gets the receiver's receipt when it comes. Stored in the
session store (schema version 3), so it outlives the process and is shared by the
workspace's instances.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from zcoder.sessions.codec import dec, enc

if TYPE_CHECKING:
    from zcoder.sessions.store import SessionStore

Direction = Literal["sent", "received"]
HISTORY_LIMIT: Final = 200
BODY_MAX_CHARS: Final = 70_000  # a message is at most ZCODER_RELAY_MAX_MESSAGE_CHARS anyway


@dataclass(frozen=True)
class RelayRecord:
    direction: Direction
    message_id: str
    peer_instance_id: str
    peer_name: str
    body: str
    state: str
    receipt_outcome: str
    receipt_summary: str
    created_at: float
    updated_at: float
    session_id: str


class RelayLog:
    """Reads and writes the relay_log table through a SessionStore's transactions."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store

    def record(
        self,
        *,
        workspace: str | os.PathLike[str],
        session_id: str,
        direction: Direction,
        message_id: str,
        peer_instance_id: str,
        peer_name: str,
        body: str,
        state: str,
    ) -> None:
        """A message sent or received; recording the same one again updates its state."""
        now = self.store._clock()
        with self.store._transaction("saving the relay history", write=True) as conn:
            conn.execute(
                "INSERT INTO relay_log (workspace, session_id, direction, message_id,"
                " peer_instance_id, peer_name, body, state, receipt, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?)"
                " ON CONFLICT (direction, message_id) DO UPDATE SET state = excluded.state,"
                " updated_at = excluded.updated_at",
                (
                    enc(os.fspath(workspace)),
                    session_id,
                    direction,
                    message_id,
                    peer_instance_id,
                    enc(peer_name),
                    enc(body[:BODY_MAX_CHARS]),
                    state,
                    now,
                    now,
                ),
            )

    def set_state(self, direction: Direction, message_id: str, state: str) -> None:
        with self.store._transaction("saving the relay history", write=True) as conn:
            conn.execute(
                "UPDATE relay_log SET state = ?, updated_at = ? WHERE direction = ?"
                " AND message_id = ?",
                (state, self.store._clock(), direction, message_id),
            )

    def set_receipt(self, message_id: str, outcome: str, summary: str) -> None:
        """The receipt for a message this workspace sent."""
        receipt = json.dumps({"outcome": outcome, "summary": summary}, ensure_ascii=False)
        with self.store._transaction("saving the relay history", write=True) as conn:
            conn.execute(
                "UPDATE relay_log SET receipt = ?, updated_at = ? WHERE direction = 'sent'"
                " AND message_id = ?",
                (receipt, self.store._clock(), message_id),
            )

    def history(
        self, workspace: str | os.PathLike[str], limit: int = HISTORY_LIMIT
    ) -> list[RelayRecord]:
        """The workspace's relayed messages, newest first."""
        with self.store._transaction("reading the relay history", write=False) as conn:
            rows = conn.execute(
                "SELECT direction, message_id, peer_instance_id, peer_name, body, state,"
                " receipt, created_at, updated_at, session_id FROM relay_log"
                " WHERE workspace = ? ORDER BY created_at DESC, id DESC LIMIT ?",
                (enc(os.fspath(workspace)), limit),
            ).fetchall()
        records = []
        for row in rows:
            try:
                receipt = json.loads(row[6]) if row[6] else {}
            except ValueError:
                receipt = {}
            records.append(
                RelayRecord(
                    direction=row[0],
                    message_id=row[1],
                    peer_instance_id=row[2],
                    peer_name=dec(row[3]),
                    body=dec(row[4]),
                    state=row[5],
                    receipt_outcome=str(receipt.get("outcome", "")),
                    receipt_summary=str(receipt.get("summary", "")),
                    created_at=row[7],
                    updated_at=row[8],
                    session_id=row[9],
                )
            )
        return records
