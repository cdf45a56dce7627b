"""Text shown to the user and to the model about peers: one function per fact.

``/list-agents`` and the ``list_agents`` tool both render records from the same
``discover`` call through this module, with control bytes and invisible characters made
visible first (``zcoder.relay.sanitize``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from zcoder.relay.client import NO_PEERS_TEXT, Peer
from zcoder.relay.sanitize import visible

__all__ = ["peer_list_for_model", "peer_table", "visible"]


_COLUMNS: Final = (("PROJECT", 17), ("PID", 7), ("STATE", 8), ("INSTANCE ID", 18))


def peer_table(peers: Sequence[Peer]) -> str:
    """The seed's table: one peer per row, workspace last (it is the distinguishing column)."""
    if not peers:
        return NO_PEERS_TEXT
    rows = [
        (
            visible(p.project),
            str(p.pid),
            visible(p.state),
            visible(p.instance_id),
            visible(p.workspace),
        )
        for p in peers
    ]
    widths = [
        max(minimum, *(len(row[i]) + 2 for row in rows))
        for i, (_title, minimum) in enumerate(_COLUMNS)
    ]
    header = "".join(title.ljust(w) for (title, _m), w in zip(_COLUMNS, widths, strict=True))
    lines = [header + "WORKSPACE"]
    for row in rows:
        lines.append(
            "".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + row[4]
        )
    return "\n".join(lines)


def peer_list_for_model(peers: Sequence[Peer]) -> str:
    """The ``list_agents`` tool result: two lines a peer, as zcoder.zsh gives them."""
    if not peers:
        return NO_PEERS_TEXT
    lines: list[str] = []
    for p in peers:
        lines.append(f"{visible(p.project)} — pid {p.pid}, {visible(p.state)}, id {p.instance_id}")
        lines.append(f"  {visible(p.workspace)} · {visible(p.profile)} · {visible(p.model)}")
    return "\n".join(lines)
