"""/list-agents' table in a narrow terminal: three short lines a peer, the same facts."""

from __future__ import annotations

from zcoder.relay.display import peer_table
from zcoder.relay.registry import Manifest


def peer(instance_id: str, project: str, workspace: str) -> Manifest:
    return Manifest(
        instance_id=instance_id,
        pid=int(instance_id.split("-", maxsplit=1)[0]),
        project=project,
        workspace=workspace,
        session_id="",
        profile="coding",
        model="m",
        socket=f"/r/a-{instance_id}.sock",
        state="ready",
        started_at=1,
        name="",
    )


PEERS = [
    peer("11524-2483981955515353233", "billing", "/home/me/src/billing"),
    peer("12687-3857132058912045261", "web\x1b[2J", "/home/me/src/web"),
]


def test_a_table_that_fits_is_the_table() -> None:
    table = peer_table(PEERS)
    assert peer_table(PEERS, width=200) == table
    assert table.splitlines()[0].startswith("NAME") and len(table.splitlines()) == 3


def test_too_narrow_each_peer_takes_three_lines_that_fit() -> None:
    narrow = peer_table(PEERS, width=56)
    assert narrow.splitlines() == [
        "billing (billing) · pid 11524 · ready",
        "  id 11524-2483981955515353233",
        "  /home/me/src/billing",
        "web--2J (web\\e[2J) · pid 12687 · ready",  # control bytes made visible
        "  id 12687-3857132058912045261",
        "  /home/me/src/web",
    ]
    assert all(len(line) <= 56 for line in narrow.splitlines())
