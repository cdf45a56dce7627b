"""The relay benchmarks. Each section returns a Table; the targets are checked in Target rows.

The receiver is always a separate peer process, as another zcoder would be; the client is
this process. The baseline is a bare AF_UNIX server process (bench.bare_server) answered
by a bare client, with the same request and response sizes, timed interleaved with the
relay so that drift on the machine affects both alike.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import (
    PeerProcess,
    Summary,
    Workspace,
    close_all,
    fs_type,
    ms,
    process_stats,
    start_peers,
    summarize,
    us,
    workspace,
)
from zcoder.relay import Relay
from zcoder.relay.client import TransportError, request
from zcoder.relay.framing import encode_frame
from zcoder.relay.protocol import Ack, Envelope, ping_request

MAX_BYTES = 65536
IO_TIMEOUT = 2.0
STALLED_BLOCK = 50  # enqueues per unloaded or loaded block
BATCH = 200  # enqueues between drains; below ZCODER_RELAY_MAX_QUEUE=256
SPOOL_LABELS = {
    "disk": "spool on /tmp (disk)",
    "tmpfs": "spool on tmpfs (XDG_RUNTIME_DIR)",
}
BODY = "Run the focused tests in services/weekly-digest and report failures. " * 3


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Target:
    name: str
    goal: str
    measured: str
    met: bool


@dataclass
class Results:
    tables: list[Table] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}×" if base > 0 else "n/a"


def _progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


# --- request helpers -------------------------------------------------------------------


def bare_round_trip(path: str, frame: bytes) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(IO_TIMEOUT)
        sock.connect(path)
        sock.sendall(frame)
        while sock.recv(65536):
            pass


class Sender:
    """Builds enqueues from a registered in-process relay (this process is the sender)."""

    def __init__(self, relay: Relay) -> None:
        assert relay.instance_id is not None
        self.relay = relay
        self.instance_id = relay.instance_id
        self._n = 0
        self._lock = threading.Lock()

    def payload(self, target: str, body: str = BODY) -> bytes:
        with self._lock:
            self._n += 1
            n = self._n
        return Envelope(
            message_id=f"{self.instance_id}-b{n}",
            target_instance_id=target,
            sender_instance_id=self.instance_id,
            sender_pid=os.getpid(),
            sender_project=self.relay.workspace.name,
            sender_workspace=str(self.relay.workspace),
            body=body,
            created_at=int(time.time()),
        ).to_payload()


def enqueue(peer: PeerProcess, payload: bytes) -> Ack:
    return request(peer.socket, payload, timeout=IO_TIMEOUT, max_bytes=MAX_BYTES)


def ping(peer: PeerProcess, n: int) -> Ack:
    payload = ping_request(f"ping-bench-{n}", peer.instance_id, "bench-1")
    return request(peer.socket, payload, timeout=IO_TIMEOUT, max_bytes=MAX_BYTES)


def drain(peer: PeerProcess, count: int, done_so_far: int) -> int:
    """Claim and complete ``count`` messages through the peer's own commands."""
    peer.command(*([{"cmd": "claim"}, {"cmd": "complete"}] * count))
    peer.wait_count("info", "completed", done_so_far + count, timeout=60)
    return done_so_far + count


def bare_server(space: Workspace, name: str, response_bytes: int) -> PeerProcess:
    path = space.root / f"{name}.sock"
    argv = [sys.executable, "-m", "bench.bare_server", str(path), str(response_bytes)]
    server = PeerProcess(space, name, argv=argv)
    server.wait_ready()
    return server


def frame_of(payload: bytes) -> bytes:
    return encode_frame(payload, MAX_BYTES)


def ack_frame_size(ack: Ack) -> int:
    return len(frame_of(ack.to_payload()))


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


# --- 1. round trips ---------------------------------------------------------------------


def round_trips(results: Results, reps: int) -> dict[str, Summary]:
    """Ping against the bare baseline, and the whole ``Relay.send``. The enqueue alone is
    measured against its floor and the bare baseline in bench/enqueue_floor.py."""
    table = Table(
        "Round trips (single client, receiver in its own process)",
        ["measure", "n", "median", "p99", "baseline median", "baseline p99", "median ratio"],
    )
    figures: dict[str, Summary] = {}
    env = {"ZCODER_RELAY_MAX_QUEUE": "256"}
    with workspace() as space:
        receivers = {"disk": PeerProcess(space, "receiver", consume=False, env=env)}
        shm = space.tmpfs_runtime()
        if shm is not None:
            receivers["tmpfs"] = PeerProcess(
                space, "receiver-tmpfs", consume=False, env={**env, "XDG_RUNTIME_DIR": str(shm)}
            )
        sender_relay = space.relay("sender")
        bare: list[PeerProcess] = []
        try:
            for peer in receivers.values():
                peer.wait_ready()
            receiver = receivers["disk"]
            pong = ping(receiver, 0)
            ping_frame = frame_of(ping_request("ping-bench-0", receiver.instance_id, "bench-1"))
            bare_ping = bare_server(space, "bare-ping", ack_frame_size(pong))
            bare.append(bare_ping)
            relay_t: list[float] = []
            bare_t: list[float] = []
            for n in range(reps):
                bare_t.append(_timed(lambda: bare_round_trip(str(bare_ping.socket), ping_frame)))
                relay_t.append(_timed(lambda n=n: ping(receiver, n)))  # type: ignore[misc]
            _row(table, "ping → pong", relay_t, bare_t, figures=figures, key="ping")
            _progress("ping done")
            # the whole Relay.send: discovery of the receivers + enqueue, as a tool call does
            relay_t = []
            count = min(reps, BATCH)
            for n in range(count):
                started = time.perf_counter()
                result = sender_relay.send(receiver.instance_id, f"task {n}")
                relay_t.append(time.perf_counter() - started)
                if result.status != "accepted":
                    raise RuntimeError(result.text)
            drain(receiver, count, 0)
            s = summarize(relay_t)
            table.rows.append(
                [f"Relay.send (discover {len(receivers)} peers + enqueue, disk spool)",
                 str(s.count), us(s.median), us(s.p99), "—", "—", "—"]
            )  # fmt: skip
        finally:
            close_all([*bare, *receivers.values()])
            sender_relay.stop()
    table.notes.append(
        f"Request size: ping {len(ping_frame)} B; the baseline's response has the size of the "
        "relay's pong. The enqueue alone is in the next table."
    )
    results.tables.append(table)
    value = figures["ping"].median / figures["ping_bare"].median
    results.targets.append(
        Target("ping: median vs bare baseline", "≤ 3×", f"{value:.2f}×", value <= 3.0)
    )
    return figures


def _row(
    table: Table,
    name: str,
    relay_t: list[float],
    bare_t: list[float],
    *,
    figures: dict[str, Summary],
    key: str,
) -> None:
    r, b = summarize(relay_t), summarize(bare_t)
    figures[key], figures[f"{key}_bare"] = r, b
    table.rows.append(
        [name, str(r.count), us(r.median), us(r.p99), us(b.median), us(b.p99),
         ratio(r.median, b.median)]
    )  # fmt: skip


# --- 2. discovery -----------------------------------------------------------------------


def discovery(results: Results, sizes: tuple[int, ...], reps: int) -> None:
    table = Table(
        "Discovery wall time (each peer its own process)",
        ["live peers", "n", "median", "p99", "peers found", "start of the new peers (concurrent)"],
    )
    figure64: float | None = None
    with workspace() as space:
        me = space.relay("discoverer")
        peers: list[PeerProcess] = []
        try:
            for size in sizes:
                added = size - len(peers)
                started = time.monotonic()
                peers += start_peers(space, added, prefix=f"d{size}-")
                start_s = time.monotonic() - started
                found = me.discover()
                if len(found.peers) != size:
                    raise RuntimeError(f"discovered {len(found.peers)} of {size}: {found.skipped}")
                samples = []
                for _ in range(reps):
                    started = time.perf_counter()
                    found = me.discover()
                    samples.append(time.perf_counter() - started)
                    if len(found.peers) != size:
                        raise RuntimeError(f"discovered {len(found.peers)} of {size}")
                s = summarize(samples)
                if size == 64:
                    figure64 = s.median
                table.rows.append(
                    [str(size), str(s.count), ms(s.median), ms(s.p99), str(len(found.peers)),
                     f"{added} in {ms(start_s)}"]
                )  # fmt: skip
                _progress(f"discovery of {size} done")
        finally:
            close_all(peers)
            me.stop()
    table.notes.append(
        "Peers are added to one registry step by step (1, then 15 more, …); the discoverer "
        "is an in-process relay, so 127 peers + itself fill the 128-manifest limit."
    )
    results.tables.append(table)
    if figure64 is not None:
        results.targets.append(
            Target("discovery of 64 peers (median)", "< 100 ms", ms(figure64), figure64 < 0.1)
        )


# --- 3. throughput ----------------------------------------------------------------------


def _senders(
    peer: PeerProcess, sender: Sender, threads: int, stop: Callable[[], bool], budget: float
) -> dict[str, int]:
    counts: dict[str, int] = {}
    lock = threading.Lock()
    deadline = time.monotonic() + budget

    def work() -> None:
        while not stop() and time.monotonic() < deadline:
            try:
                status = enqueue(peer, sender.payload(peer.instance_id)).status
            except TransportError as exc:  # counted, not fatal: the table shows it
                status = f"error: {exc.reason}"
            with lock:
                counts[status] = counts.get(status, 0) + 1

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return counts


def throughput(results: Results, steady_messages: int) -> None:
    table = Table(
        "Enqueue throughput, 4 concurrent senders (ZCODER_RELAY_MAX_QUEUE=256)",
        ["phase", "accepted", "full", "other", "wall time", "accepted/s"],
    )
    with workspace() as space:
        sender_relay = space.relay("sender")
        spools: dict[str, dict[str, str]] = {"disk": {}}
        shm = space.tmpfs_runtime()
        if shm is not None:
            spools["tmpfs"] = {"XDG_RUNTIME_DIR": str(shm)}
        try:
            sender = Sender(sender_relay)
            for where, extra in spools.items():
                env = {"ZCODER_RELAY_MAX_QUEUE": "256", **extra}
                label = SPOOL_LABELS[where]
                # until full: nobody claims
                filler = PeerProcess(space, f"filler-{where}", consume=False, env=env)
                try:
                    filler.wait_ready()
                    started = time.perf_counter()
                    counts = _senders_until_full(filler, sender, {"full": False})
                    elapsed = time.perf_counter() - started
                    _throughput_row(table, f"empty → full, no consumer; {label}", counts, elapsed)
                finally:
                    filler.close()
                # steady state: the peer's own consumer claims and completes as they arrive
                consumer = PeerProcess(space, f"consumer-{where}", consume=True, env=env)
                try:
                    consumer.wait_ready()
                    total = {"n": 0}
                    lock = threading.Lock()

                    def stop(total: dict[str, int] = total, lock: threading.Lock = lock) -> bool:
                        with lock:
                            total["n"] += 1
                            return total["n"] > steady_messages

                    started = time.perf_counter()
                    counts = _senders(consumer, sender, 4, stop, 120)
                    elapsed = time.perf_counter() - started
                    _throughput_row(
                        table, f"steady state, consumer claiming; {label}", counts, elapsed
                    )
                    consumer.wait_count("received", None, counts.get("accepted", 0), timeout=60)
                finally:
                    consumer.close()
        finally:
            sender_relay.stop()
    table.notes.append(
        "Senders are 4 threads of the benchmark process, each opening one connection per "
        "enqueue; `full` answers are retried at once. The consumer is the peer's own "
        "claim-and-complete loop (zcoder.relay.peer), printing each message."
    )
    results.tables.append(table)


def _senders_until_full(
    peer: PeerProcess, sender: Sender, state: dict[str, bool]
) -> dict[str, int]:
    lock = threading.Lock()

    def stop() -> bool:
        with lock:
            return state["full"]

    counts: dict[str, int] = {}
    deadline = time.monotonic() + 120

    def work() -> None:
        while not stop() and time.monotonic() < deadline:
            status = enqueue(peer, sender.payload(peer.instance_id)).status
            with lock:
                counts[status] = counts.get(status, 0) + 1
                if status == "full":
                    state["full"] = True

    workers = [threading.Thread(target=work) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return counts


def _throughput_row(table: Table, phase: str, counts: dict[str, int], elapsed: float) -> None:
    accepted = counts.get("accepted", 0)
    full = counts.get("full", 0)
    other = sum(v for k, v in counts.items() if k not in ("accepted", "full"))
    table.rows.append(
        [phase, str(accepted), str(full), str(other), ms(elapsed), f"{accepted / elapsed:,.0f}"]
    )


# --- 4. stalled connections ---------------------------------------------------------------


def stalled(results: Results, reps: int, stalled_count: int = 32) -> None:
    table = Table(
        f"Healthy client under {stalled_count} connections holding half-sent headers",
        ["measure", "n", "median", "p99", "median vs unloaded"],
    )
    env = {"ZCODER_RELAY_MAX_QUEUE": "256", "ZCODER_RELAY_IO_TIMEOUT": "30"}
    loaded_ratio = None
    with workspace() as space:
        # On tmpfs when there is one, so the figure is the listener's, not the disk's fsyncs.
        shm = space.tmpfs_runtime()
        spool = "disk" if shm is None else "tmpfs"
        if shm is not None:
            env["XDG_RUNTIME_DIR"] = str(shm)
        table.title += f" ({SPOOL_LABELS[spool]})"
        sender_relay = space.relay("sender")
        peer = PeerProcess(space, "receiver", consume=False, env=env)
        try:
            peer.wait_ready()
            sender = Sender(sender_relay)
            done = 0
            samples: dict[str, list[float]] = {
                "unloaded": [], "loaded": [], "unloaded-ping": [], "loaded-ping": []
            }  # fmt: skip
            # Alternate unloaded and loaded blocks so drift on the machine hits both alike.
            block = STALLED_BLOCK
            for _round in range(max(1, reps // block)):
                for label, load in (("unloaded", 0), ("loaded", stalled_count)):
                    held: list[socket.socket] = []
                    try:
                        for _ in range(load):
                            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                            held.append(sock)
                            sock.connect(str(peer.socket))
                            sock.sendall(b"ZCODER-AGENT/1 12")  # no LF: the header never ends
                        time.sleep(0.05)
                        for n in range(block):
                            payload = sender.payload(peer.instance_id)
                            started = time.perf_counter()
                            ack = enqueue(peer, payload)
                            samples[label].append(time.perf_counter() - started)
                            if ack.status != "accepted":
                                raise RuntimeError(f"enqueue answered {ack.status}")
                            pinged = _timed(lambda n=n: ping(peer, n))  # type: ignore[misc]
                            samples[f"{label}-ping"].append(pinged)
                        still_open = sum(1 for sock in held if _still_open(sock))
                        if still_open != load:
                            raise RuntimeError(f"only {still_open} of {load} stalled held")
                    finally:
                        for sock in held:
                            sock.close()
                done = drain(peer, 2 * block, done)
            figures = {key: summarize(values) for key, values in samples.items()}
            for key, name in (("", "enqueue"), ("-ping", "ping")):
                base = figures[f"unloaded{key}"]
                for label in ("unloaded", "loaded"):
                    s = figures[f"{label}{key}"]
                    table.rows.append(
                        [f"{name}, {label}", str(s.count), us(s.median), us(s.p99),
                         ratio(s.median, base.median)]
                    )  # fmt: skip
            loaded_ratio = figures["loaded"].median / figures["unloaded"].median
        finally:
            peer.close()
            sender_relay.stop()
    table.notes.append(
        f"Blocks of {STALLED_BLOCK} unloaded and {STALLED_BLOCK} loaded requests alternate; "
        "for each loaded block the stalled connections are opened first and checked still "
        "open (not answered) at its end; the receiver runs with ZCODER_RELAY_IO_TIMEOUT=30 "
        "so none expires meanwhile."
    )
    results.tables.append(table)
    assert loaded_ratio is not None
    results.targets.append(
        Target(
            f"enqueue median under {stalled_count} stalled connections vs unloaded",
            "< 2×",
            f"{loaded_ratio:.2f}×",
            loaded_ratio < 2.0,
        )
    )


def _still_open(sock: socket.socket) -> bool:
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False  # answered or closed: it is no longer stalled


# --- 5. start and stop ------------------------------------------------------------------


def start_stop(results: Results, reps: int, process_reps: int) -> None:
    table = Table(
        "Relay start and stop",
        ["measure", "n", "median", "p99"],
    )
    with workspace() as space:
        starts, stops = [], []
        for _ in range(reps):
            started = time.perf_counter()
            relay = space.relay("lifecycle")
            starts.append(time.perf_counter() - started)
            started = time.perf_counter()
            relay.stop()
            stops.append(time.perf_counter() - started)
        for name, samples in (("Relay.start() in process (until ready)", starts),
                              ("Relay.stop() in process", stops)):  # fmt: skip
            s = summarize(samples)
            table.rows.append([name, str(s.count), ms(s.median), ms(s.p99)])
        spawn = []
        for n in range(process_reps):
            peer = PeerProcess(space, f"spawn{n}")
            try:
                peer.wait_ready()
                assert peer.ready_at is not None
                spawn.append(peer.ready_at - peer.started)
            finally:
                peer.close()
        s = summarize(spawn)
        table.rows.append(
            ["relay-only peer process: spawn → ready line (includes Python start-up)",
             str(s.count), ms(s.median), ms(s.p99)]
        )  # fmt: skip
        on, off = app_startup(space, process_reps * 2)
        for name, samples in (("interactive app start, relay on", on),
                              ("interactive app start, relay off", off)):  # fmt: skip
            s = summarize(samples)
            table.rows.append([name, str(s.count), ms(s.median), ms(s.p99)])
        added = summarize(on).median - summarize(off).median
        table.rows.append(["what the relay adds to zcoder's start-up (difference of medians)",
                           "—", ms(added), "—"])  # fmt: skip
        results.targets.append(
            Target("relay's addition to zcoder start-up", "< 50 ms", ms(added), added < 0.050)
        )
    results.tables.append(table)


def app_startup(space: Workspace, reps: int) -> tuple[list[float], list[float]]:
    """The real Textual app, headless, from construction until both stages of its start-up
    have run, with the relay on and off, interleaved; the fake Ollama answers the warm-up."""
    import asyncio

    from tests.fixtures.fake_ollama import FakeOllama

    from zcoder.config import load_config
    from zcoder.tui import ZcoderApp

    async def once(env: dict[str, str]) -> float:
        started = time.perf_counter()
        app = ZcoderApp(load_config(env, workspace=str(space.project("app"))))
        async with app.run_test(size=(100, 30)) as pilot:
            while not app.started:  # both stages of start-up (tui/app.py)
                await pilot.pause(0.001)
            elapsed = time.perf_counter() - started
        return elapsed

    on: list[float] = []
    off: list[float] = []
    with FakeOllama() as server:
        base = {**space.env, "OLLAMA_HOST": server.url}
        for n in range(reps + 1):
            a = asyncio.run(once({**base, "ZCODER_RELAY": "on"}))
            b = asyncio.run(once({**base, "ZCODER_RELAY": "off"}))
            if n:  # the first pair warms imports and caches
                on.append(a)
                off.append(b)
    return on, off


# --- 6. resources -----------------------------------------------------------------------


def _mixed_connection(peer: PeerProcess, n: int) -> None:
    kind = n % 10
    if kind < 7:
        ping(peer, n)
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(IO_TIMEOUT)
        sock.connect(str(peer.socket))
        if kind == 7:
            sock.sendall(b"ZCODER-AGENT/1 5\nxxxxx")  # unreadable JSON: invalid
        elif kind == 8:
            sock.sendall(b"ZCODER-AGENT/1 4")  # half a header, then gone
            return
        else:
            sock.sendall(b"garbage")
            sock.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            while sock.recv(4096):
                pass


def resources(results: Results, connections: int) -> None:
    table = Table(
        "Resources of one idle instance (a relay-only peer process)",
        ["when", "RSS", "threads", "open descriptors", "connections served so far"],
    )
    growth_ok = True
    with workspace() as space:
        peer = PeerProcess(space, "idle")
        try:
            peer.wait_ready()
            time.sleep(0.5)
            rows: list[tuple[str, int]] = [("idle after start", 0)]
            snapshots = [process_stats(peer.pid)]
            served = 0
            for round_name in ("after", "after"):
                for n in range(connections):
                    _mixed_connection(peer, served + n)
                served += connections
                time.sleep(2.5)  # the abandoned half-headers reach their deadline
                rows.append((f"{round_name} {served:,} connections", served))
                snapshots.append(process_stats(peer.pid))
                _progress(f"{served} connections done")
            for (label, count), snap in zip(rows, snapshots, strict=True):
                table.rows.append(
                    [label, f"{snap.rss_kib:,} KiB", str(snap.threads), str(snap.fds), f"{count:,}"]
                )
            first, second, third = snapshots
            fd_ok = first.fds == second.fds == third.fds
            thread_ok = first.threads == second.threads == third.threads
            # The first 10,000 may still warm allocator pools; the second must not grow.
            rss_growth = third.rss_kib - second.rss_kib
            rss_ok = rss_growth <= 512
            growth_ok = fd_ok and thread_ok and rss_ok
            results.targets.append(
                Target(
                    f"no growth after {connections:,} connections",
                    "descriptors and threads equal; RSS +≤ 512 KiB over the second batch",
                    f"fds {first.fds}/{second.fds}/{third.fds}, threads "
                    f"{first.threads}/{second.threads}/{third.threads}, RSS "
                    f"{rss_growth:+,} KiB",
                    growth_ok,
                )
            )
        finally:
            peer.close()
    table.notes.append(
        "Connections: 70% pings, 10% unreadable JSON, 10% half a header then close, 10% raw "
        "garbage then half-close; one at a time. Read from /proc/<pid>/status and /fd."
    )
    results.tables.append(table)


def machine() -> list[str]:
    uname = os.uname()
    return [
        f"nproc: {os.cpu_count()}",
        f"python: {sys.version.split()[0]} ({sys.implementation.name})",
        f"kernel: {uname.sysname} {uname.release} {uname.machine}",
        f"file system of /tmp (registry; disk spool): {fs_type(Path('/tmp'))}",
        f"file system of /dev/shm (tmpfs spool): {fs_type(Path('/dev/shm'))}",
    ]
