"""Shared pieces of the benchmarks: private directories, peer processes, statistics.

Every peer is a separate process (``python -m zcoder.relay --json``), started without
waiting, so many can be started at once and then waited for by their ready lines. Their
stdout goes to a file, so nothing they print can ever fill a pipe and stall them.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from zcoder.relay import Relay, load_relay_settings

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
POLL_INTERVAL = 0.005
TMPFS_CANDIDATE = "/dev/shm"
REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Summary:
    """Median and 99th percentile of repeated timings, in seconds."""

    median: float
    p99: float
    count: int


def summarize(samples: Sequence[float]) -> Summary:
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = max(0, math.ceil(0.99 * len(ordered)) - 1)
    return Summary(statistics.median(ordered), ordered[rank], len(ordered))


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ZCODER_")}
    env.update(extra)
    return env


class Workspace:
    """A private short directory with a registry, a runtime dir and project folders."""

    def __init__(self, prefix: str = "zb") -> None:
        self.root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
        self.registry = self.root / "reg"
        self.runtime = self.root / "run"
        self.runtime.mkdir(mode=0o700)
        self._extra: list[Path] = []
        self.env = clean_env(
            ZCODER_RELAY_DIR=str(self.registry),
            XDG_RUNTIME_DIR=str(self.runtime),
            TMPDIR=str(self.root),
            ZCODER_HOME=str(self.root / "home"),
        )

    def project(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(exist_ok=True)
        return path

    def relay(self, name: str, **env: str) -> Relay:
        """An in-process relay in this registry (the benchmark process itself)."""
        environment = {**self.env, **env}
        relay = Relay(
            load_relay_settings(environment), workspace=self.project(name), env=environment
        )
        status = relay.start()
        if not status.available:
            raise RuntimeError(f"in-process relay did not start: {status.reason}")
        return relay

    def tmpfs_runtime(self) -> Path | None:
        """A private runtime directory on tmpfs (as XDG_RUNTIME_DIR usually is), if any."""
        if fs_type(Path(TMPFS_CANDIDATE)) != "tmpfs" or not os.access(TMPFS_CANDIDATE, os.W_OK):
            return None
        path = Path(tempfile.mkdtemp(prefix="zb", dir=TMPFS_CANDIDATE))
        self._extra.append(path)
        return path

    def close(self) -> None:
        for path in [*self._extra, self.root]:
            shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def workspace(prefix: str = "zb") -> Iterator[Workspace]:
    space = Workspace(prefix)
    try:
        yield space
    finally:
        space.close()


@dataclass(frozen=True)
class ProcessStats:
    rss_kib: int
    threads: int
    fds: int


def process_stats(pid: int) -> ProcessStats:
    rss = threads = 0
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return ProcessStats(rss, threads, len(os.listdir(f"/proc/{pid}/fd")))


class PeerProcess:
    """A relay-only peer in its own process; ``wait_ready`` before using it."""

    def __init__(
        self,
        space: Workspace,
        name: str,
        *,
        consume: bool = True,
        env: dict[str, str] | None = None,
        argv: list[str] | None = None,
    ) -> None:
        self.name = name
        self.started = time.monotonic()
        self.out_path = space.root / f"{name}.out"
        self._out: IO[bytes] = open(self.out_path, "wb")  # noqa: SIM115 - closed in close()
        args = [sys.executable, "-m", "zcoder.relay", "--json", "-w", str(space.project(name))]
        if not consume:
            args.append("--no-consume")
        self.proc = subprocess.Popen(
            argv or args,
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=self._out,
            stderr=subprocess.DEVNULL,
            env={**space.env, **(env or {})},
        )
        self.ready_at: float | None = None
        self.instance_id = ""
        self.socket = Path()
        self._read_offset = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def events(self) -> list[dict[str, Any]]:
        """Every complete JSON line printed so far."""
        try:
            data = self.out_path.read_bytes()
        except OSError:
            return []
        found: list[dict[str, Any]] = []
        for line in data.split(b"\n")[:-1]:
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
        return found

    def poll_ready(self) -> bool:
        if self.ready_at is not None:
            return True
        events = self.events()
        if not events:
            if self.proc.poll() is not None:
                raise RuntimeError(f"peer {self.name} exited with {self.proc.returncode}")
            return False
        first = events[0]
        if first.get("event") != "ready":
            raise RuntimeError(f"peer {self.name} did not start: {first}")
        self.ready_at = time.monotonic()
        self.instance_id = str(first["instance_id"])
        self.socket = Path(str(first["socket"]))
        return True

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        wait_all_ready([self], timeout)

    def command(self, *commands: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        text = "".join(json.dumps(c) + "\n" for c in commands)
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def wait_count(self, event: str, text: str | None, count: int, timeout: float = 30) -> None:
        """Wait until at least ``count`` events of this kind (and text) were printed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = sum(
                1
                for e in self.events()
                if e.get("event") == event and (text is None or e.get("text") == text)
            )
            if seen >= count:
                return
            time.sleep(POLL_INTERVAL)
        raise TimeoutError(f"peer {self.name}: fewer than {count} {event} events")

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                self.command({"cmd": "quit"})
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        self._out.close()


def wait_all_ready(peers: Sequence[PeerProcess], timeout: float = READY_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    waiting = list(peers)
    while waiting:
        waiting = [p for p in waiting if not p.poll_ready()]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(waiting)} peers were not ready in {timeout} s")
        time.sleep(POLL_INTERVAL)


def start_peers(
    space: Workspace, count: int, prefix: str = "p", **kwargs: Any
) -> list[PeerProcess]:
    """Start ``count`` peer processes at once, then wait for all their ready lines."""
    peers: list[PeerProcess] = []
    try:
        for n in range(count):
            peers.append(PeerProcess(space, f"{prefix}{n:03d}", **kwargs))
        wait_all_ready(peers)
    except BaseException:
        close_all(peers)
        raise
    return peers


def close_all(peers: Sequence[PeerProcess]) -> None:
    """Ask every peer to quit at once, then wait for each (killing any that hang)."""
    for peer in peers:
        if peer.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                peer.command({"cmd": "quit"})
    for peer in peers:
        peer.close()


def fs_type(path: Path) -> str:
    """The file-system type of the longest mount point containing ``path``."""
    best, kind = "", "unknown"
    target = str(path.resolve())
    with contextlib.suppress(OSError), open("/proc/mounts", encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) < 3:
                continue
            mount = parts[1]
            inside = target == mount or target.startswith(mount.rstrip("/") + "/")
            if inside and len(mount) > len(best):
                best, kind = mount, parts[2]
    return kind
