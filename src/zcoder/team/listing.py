"""What ``/team`` says of each worker: its activity (the relay registry's), its branch and
worktree, the task board's tasks it holds (zcoder.board: a claim is its process's, so a
worker that is gone holds none), and the last receipts of the tasks sent to it (the relay
history's)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.board import State, Task, render
from zcoder.relay import Peer, doing
from zcoder.team.roster import Worker

RECEIPTS_SHOWN: Final = 2
SUMMARY_SHOWN: Final = 60
NO_WORKERS: Final = "No workers were spawned from this repository. /spawn NAME TASK starts one."


def live_peer(worker: Worker, peers: Sequence[Peer]) -> Peer | None:
    """The worker's live relay peer: its instance, else its process."""
    for peer in peers:
        if worker.instance_id and peer.instance_id == worker.instance_id:
            return peer
    return next((p for p in peers if worker.pid and p.pid == worker.pid), None)


def activity_of(worker: Worker, peers: Sequence[Peer], window_open: bool) -> str:
    peer = live_peer(worker, peers)
    if peer is not None:
        return doing(peer) or peer.state
    return "starting or quitting (no relay)" if window_open else "not running"


def claims_of(worker: Worker, tasks: Sequence[Task]) -> list[Task]:
    """The board's tasks ``worker``'s process holds (a task claimed by a live process)."""
    return [t for t in tasks if t.state is State.CLAIMED and worker.pid and t.pid == worker.pid]


def team_text(
    workers: Sequence[Worker],
    peers: Sequence[Peer],
    receipts: Mapping[str, tuple[str, str]],
    open_windows: set[str],
    tasks: Sequence[Task] = (),
) -> str:
    """The listing; ``receipts``: message id -> (outcome, summary) of tasks sent here;
    ``tasks``: the repository's task board (its claims are shown under their holder)."""
    if not workers:
        return NO_WORKERS
    lines = [f"The team ({len(workers)}): /team merge NAME · /team stop NAME [remove]"]
    for worker in workers:
        activity = activity_of(worker, peers, worker.window in open_windows)
        lines.append(
            f"{visible(worker.name)} · {visible(activity)} · {visible(worker.branch)} · "
            f"{visible(worker.worktree)}"
        )
        for task in claims_of(worker, tasks):
            lines.append(f"  claims {render.line(task, visible)}")
        got = [receipts[m] for m in worker.messages if m in receipts]
        for outcome, summary in got[-RECEIPTS_SHOWN:]:
            flat = " ".join(summary.split())
            cut = flat[:SUMMARY_SHOWN] + ("…" if len(flat) > SUMMARY_SHOWN else "")
            lines.append(f"  receipt: {visible(outcome)}" + (f" · {visible(cut)}" if cut else ""))
        waiting = len(worker.messages) - len(got)
        if waiting:
            lines.append(f"  {counted(waiting, 'task')} without a receipt yet")
    return "\n".join(lines)
