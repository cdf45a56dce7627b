"""Enqueue → accepted, held against its floor: a server that does the same work.

An ``accepted`` promises that the whole message is in a file of the receiver's before the
answer. The floor (``bench.bare_server`` with a spool directory) is a plain Python server
in its own process that does just that and nothing else: it reads the frame, writes the
payload to a new file, renames it into place and answers a response of the ack's size. The
relay's goal is at most twice the floor's median, both back to back and with 60 ms between
messages (each request then meets processes that were idle, as a real sender's does). The
bare server (answer only) is timed too, as information.

The three are timed interleaved, one request each in turn, in the same loop, so load on
the machine hits them alike; each spool kind gets a floor on the same file system as the
relay's spool (/tmp on disk; tmpfs as XDG_RUNTIME_DIR usually is).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from bench.harness import PeerProcess, Summary, Workspace, close_all, summarize, us, workspace
from bench.relay_bench import (
    BATCH,
    SPOOL_LABELS,
    Results,
    Sender,
    Table,
    Target,
    _progress,
    ack_frame_size,
    bare_round_trip,
    bare_server,
    drain,
    enqueue,
    frame_of,
    ratio,
)

SPACING = 0.060  # seconds between messages in the spaced measurement
GOAL = 2.0  # enqueue median at most this many times the floor's


def floor_server(space: Workspace, name: str, response_bytes: int, spool: Path) -> PeerProcess:
    """The floor: bench.bare_server writing each payload to a file under ``spool``."""
    path = space.root / f"{name}.sock"
    argv = [sys.executable, "-m", "bench.bare_server", str(path), str(response_bytes), str(spool)]
    server = PeerProcess(space, name, argv=argv)
    server.wait_ready()
    return server


def drain_floor(spool: Path, expected: int) -> None:
    """Remove what the floor stored (outside the timing), checking it stored every message."""
    inbox = spool / "inbox"
    names = os.listdir(inbox)
    if len(names) != expected:
        raise RuntimeError(f"the floor stored {len(names)} of {expected} messages")
    for name in names:
        os.unlink(inbox / name)


def _bare_timed(path: str, frame: bytes) -> float:
    started = time.perf_counter()
    bare_round_trip(path, frame)
    return time.perf_counter() - started


def _pause(seconds: float) -> None:
    if seconds:
        time.sleep(seconds)


def run(
    results: Results, reps: int, spaced_reps: int, only: str | None = None
) -> dict[str, Summary]:
    """``only``: one spool kind (``disk`` or ``tmpfs``), for trying a change by hand."""
    table = Table(
        "Enqueue → accepted against its floor (receiver in its own process)",
        ["spool", "pacing", "n", "median", "p99", "floor median", "floor p99", "vs floor",
         "bare median", "vs bare (information)"],
    )  # fmt: skip
    figures: dict[str, Summary] = {}
    env = {"ZCODER_RELAY_MAX_QUEUE": "256"}
    with workspace() as space:
        receivers = {"disk": PeerProcess(space, "receiver", consume=False, env=env)}
        spools = {"disk": space.root / "floor-spool"}
        shm = space.tmpfs_runtime()
        if shm is not None:
            receivers["tmpfs"] = PeerProcess(
                space, "receiver-tmpfs", consume=False, env={**env, "XDG_RUNTIME_DIR": str(shm)}
            )
            spools["tmpfs"] = shm / "floor-spool"
        sender_relay = space.relay("sender")
        servers: list[PeerProcess] = []
        try:
            for peer in receivers.values():
                peer.wait_ready()
            sender = Sender(sender_relay)
            first = receivers["disk"]
            accepted = enqueue(first, sender.payload(first.instance_id))
            done = {"disk": drain(first, 1, 0), "tmpfs": 0}
            size = ack_frame_size(accepted)
            bare = bare_server(space, "bare-enqueue", size)
            servers.append(bare)
            floors = {where: floor_server(space, f"floor-{where}", size, spools[where])
                      for where in receivers}  # fmt: skip
            servers.extend(floors.values())
            for where, peer in receivers.items():
                if only is not None and where != only:
                    continue
                for pacing, count, gap in (
                    ("back to back", reps, 0.0),
                    (f"{SPACING * 1000:.0f} ms apart", spaced_reps, SPACING),
                ):
                    relay_t: list[float] = []
                    floor_t: list[float] = []
                    bare_t: list[float] = []
                    remaining = count
                    while remaining > 0:
                        batch = min(BATCH, remaining)
                        for _ in range(batch):
                            payload = sender.payload(peer.instance_id)
                            frame = frame_of(payload)
                            _pause(gap)
                            bare_t.append(_bare_timed(str(bare.socket), frame))
                            _pause(gap)
                            floor_t.append(_bare_timed(str(floors[where].socket), frame))
                            _pause(gap)
                            started = time.perf_counter()
                            ack = enqueue(peer, payload)
                            relay_t.append(time.perf_counter() - started)
                            if ack.status != "accepted":
                                raise RuntimeError(f"enqueue answered {ack.status}")
                        done[where] = drain(peer, batch, done[where])
                        drain_floor(spools[where], batch)
                        remaining -= batch
                    r, f, b = summarize(relay_t), summarize(floor_t), summarize(bare_t)
                    key = f"{where}, {pacing}"
                    figures[key], figures[f"{key} floor"], figures[f"{key} bare"] = r, f, b
                    table.rows.append(
                        [SPOOL_LABELS[where], pacing, str(r.count), us(r.median), us(r.p99),
                         us(f.median), us(f.p99), ratio(r.median, f.median), us(b.median),
                         ratio(r.median, b.median)]
                    )  # fmt: skip
                    results.targets.append(
                        Target(
                            f"enqueue, {SPOOL_LABELS[where]}, {pacing}: median vs the floor "
                            "(write + rename server)",
                            f"≤ {GOAL:.0f}×",
                            f"{r.median / f.median:.2f}×",
                            r.median <= GOAL * f.median,
                        )
                    )
                    _progress(f"enqueue ({where}, {pacing}) done")
        finally:
            close_all([*servers, *receivers.values()])
            sender_relay.stop()
    table.notes.append(
        f"Each row times the relay, the floor and the bare server in turn, one request each, "
        f"with {SPACING * 1000:.0f} ms before each request in the spaced rows. The floor writes "
        "the request's payload to a new file and renames it into place before it answers "
        "(bench/bare_server.py); the bare server only answers. Responses are as large as the "
        "relay's ack. Enqueues are drained every 200, outside the timing."
    )
    results.tables.append(table)
    return figures


if __name__ == "__main__":
    from bench import report

    only = Results()
    run(only, int(sys.argv[1]) if len(sys.argv) > 1 else 2000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 200,
        sys.argv[3] if len(sys.argv) > 3 else None)  # fmt: skip
    print(report.markdown_table(report.targets_table(only.targets)))
    for t in only.tables:
        print(report.markdown_table(t))
