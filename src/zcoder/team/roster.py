"""The workers a repository's lead spawned, kept in a small private file so ``/team``
knows them after a restart: ``$ZCODER_HOME/team/<repository key>.json``.

One file per repository (its top directory, resolved), written whole and renamed into
place; it is read back only when it is a regular file of this user, at most
ROSTER_MAX_BYTES, and an entry that is not well formed is left out, so a damaged file
loses nothing but itself.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Final

from zcoder.base.safefile import (
    PRIVATE_FILE_MODE,
    UnsafeFile,
    ensure_private_dir,
    read_own_file,
    replace_with,
)
from zcoder.relay import BadName, check_name
from zcoder.team.git import TeamError

ROSTER_MAX_BYTES: Final = 256 * 1024
ROSTER_MAX_WORKERS: Final = 64
MESSAGES_KEPT: Final = 20  # the task message ids kept per worker (for its last receipts)


@dataclass
class Worker:
    """One spawned worker: where it works and how to reach it."""

    name: str
    branch: str
    worktree: str  # the worktree's top directory
    workdir: str  # where it runs: the worktree, or the lead's subdirectory in it
    base: str  # the lead's branch when it was spawned
    window: str = ""  # tmux's window id (@12): tmux targets it by id, never by name
    pid: int = 0  # the worker's process (the window's first process, exec'd into zcoder)
    instance_id: str = ""  # its relay instance, once it was seen ready
    spawned_at: float = 0.0
    messages: list[str] = field(default_factory=list)  # tasks sent to it, oldest first


_KINDS: Final[dict[str, type | tuple[type, ...]]] = {
    "pid": int,
    "spawned_at": (int, float),
    "messages": list,
}


def _worker(raw: object) -> Worker | None:
    """An entry of the file as a Worker; None when it is not well formed."""
    if not isinstance(raw, dict):
        return None
    values: dict[str, Any] = {}
    for member in fields(Worker):
        if member.name not in raw:
            continue
        value = raw[member.name]
        if isinstance(value, bool) or not isinstance(value, _KINDS.get(member.name, str)):
            return None
        values[member.name] = value
    try:
        worker = Worker(**values)
        check_name(worker.name)
    except (TypeError, BadName):
        return None
    worker.messages = [m for m in worker.messages if isinstance(m, str)][-MESSAGES_KEPT:]
    return worker


class Roster:
    """The workers of one repository, as its file holds them."""

    def __init__(self, home: Path, repo: Path) -> None:
        key = hashlib.sha256(os.fsencode(repo.resolve())).hexdigest()[:20]
        self.path = home / "team" / f"{key}.json"
        self.repo = repo

    def load(self) -> list[Worker]:
        try:
            data = read_own_file(self.path, ROSTER_MAX_BYTES)
        except UnsafeFile:
            return []  # none yet (or not one of ours: never read)
        try:
            raw = json.loads(data)
        except ValueError:
            return []
        entries = raw.get("workers") if isinstance(raw, dict) else None
        if not isinstance(entries, list):
            return []
        return [w for w in map(_worker, entries[:ROSTER_MAX_WORKERS]) if w is not None]

    def save(self, workers: list[Worker]) -> None:
        ensure_private_dir(self.path.parent)
        body = {"repo": str(self.repo), "workers": [asdict(w) for w in workers]}
        data = json.dumps(body, indent=1).encode("utf-8")
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        replace_with(temporary, self.path, data, PRIVATE_FILE_MODE, durable=True)

    def find(self, name: str) -> Worker | None:
        wanted = name.casefold()
        return next((w for w in self.load() if w.name.casefold() == wanted), None)

    def put(self, worker: Worker) -> None:
        """Add ``worker``, or replace the entry of that name."""
        workers = [w for w in self.load() if w.name.casefold() != worker.name.casefold()]
        if len(workers) >= ROSTER_MAX_WORKERS:
            raise TeamError(
                f"the team holds {ROSTER_MAX_WORKERS} workers already: /team stop NAME remove"
                " some first"
            )
        self.save([*workers, worker])

    def remove(self, name: str) -> None:
        self.save([w for w in self.load() if w.name.casefold() != name.casefold()])
