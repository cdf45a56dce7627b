"""Ping to a live interactive zcoder: the whole app in a pseudo-terminal, its relay's
listener in its own process, first idle and then while it streams a reply.

The app talks to a fake Ollama (tests/fixtures/fake_ollama.py) run as a process of its own
on 127.0.0.1, scripted to stream a long reply at 200 chunks a second. The bench process
only pings (zcoder's own client, as any peer would) and, interleaved with it, the bare
baseline (bench.bare_server with a bare client), so drift on the machine affects both.
Streaming is checked, not assumed: the instance's manifest says ``busy`` and the terminal
received output during every measured block.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from bench.harness import REPO_ROOT, Workspace, clean_env, summarize, us, workspace
from bench.relay_bench import (
    IO_TIMEOUT,
    MAX_BYTES,
    Results,
    Table,
    Target,
    _progress,
    _timed,
    ack_frame_size,
    bare_round_trip,
    bare_server,
    frame_of,
    ratio,
)
from zcoder.relay.client import discover, request
from zcoder.relay.protocol import ping_request

CHUNKS_PER_SECOND = 200
STREAM_WORDS = 40_000  # 200 s at 200 chunks/s: far longer than the measurement
START_TIMEOUT = 60.0
BLOCK = 50  # pings per interleaved block
IDLE_SETTLE = 2.0  # seconds after the manifest appears before "idle" is measured


class _Terminal:
    """The app in a pseudo-terminal; a thread reads (and counts) everything it draws."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.master = master
        self.received = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.received += len(data)

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        with contextlib.suppress(OSError):
            os.close(self.master)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _fake_ollama(space: Workspace) -> tuple[subprocess.Popen[bytes], int]:
    script = space.root / "stream.json"
    words = " ".join(f"word{n}" for n in range(STREAM_WORDS))
    script.write_text(json.dumps([{"text": words, "delay": 1 / CHUNKS_PER_SECOND}]))
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fixtures.fake_ollama", "--port", str(port),
         "--script", str(script), "--quiet"],
        cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        with socket.socket() as probe, contextlib.suppress(OSError):
            probe.connect(("127.0.0.1", port))
            return server, port
        if time.monotonic() > deadline:
            server.kill()
            raise RuntimeError("the fake Ollama did not start")
        time.sleep(0.05)


def _wait_for_manifest(registry: Path, pid: int, state: str | None = None) -> tuple[str, Path]:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for peer in discover(registry, self_instance_id=None, timeout=IO_TIMEOUT).peers:
            if peer.pid == pid and (state is None or peer.state == state):
                return peer.instance_id, Path(peer.socket)
        time.sleep(0.05)
    raise RuntimeError(f"the app's manifest{' in state ' + state if state else ''} never came")


def run(results: Results, reps: int) -> None:
    table = Table(
        "Ping to a live interactive zcoder (the app in a pseudo-terminal; listener in its "
        "own process)",
        ["instance", "n", "median", "p99", "baseline median", "baseline p99", "median ratio",
         "terminal output during the pings"],
    )  # fmt: skip
    with workspace("zi") as space:
        server, port = _fake_ollama(space)
        project = space.project("interactive")
        home = space.root / "home"
        env = clean_env(
            ZCODER_HOME=str(home),
            ZCODER_RELAY_DIR=str(space.registry),
            OLLAMA_HOST=f"http://127.0.0.1:{port}",
            ZCODER_MODEL="qwen3-coder:latest",
            TERM="xterm-256color",
            COLUMNS="100",
            LINES="30",
        )
        app = _Terminal([sys.executable, "-m", "zcoder"], env, project)
        bare = None
        try:
            instance_id, sock = _wait_for_manifest(space.registry, app.process.pid)
            time.sleep(IDLE_SETTLE)  # past start-up's drawing and the model's warm-up
            payload = ping_request("ping-interactive", instance_id, "bench-1")
            pong = request(sock, payload, timeout=IO_TIMEOUT, max_bytes=MAX_BYTES)
            bare = bare_server(space, "bare-ping-interactive", ack_frame_size(pong))
            frame = frame_of(payload)
            figures = {}
            for phase in ("idle", "streaming"):
                if phase == "streaming":
                    app.type(b"stream a long reply\r")
                    _wait_for_manifest(space.registry, app.process.pid, state="busy")
                    time.sleep(0.5)  # well into the stream
                relay_t: list[float] = []
                bare_t: list[float] = []
                drawn_before = app.received
                for _ in range(0, reps, BLOCK):
                    for _ in range(BLOCK):
                        bare_t.append(_timed(lambda: bare_round_trip(str(bare.socket), frame)))
                        relay_t.append(
                            _timed(lambda: request(
                                sock, payload, timeout=IO_TIMEOUT, max_bytes=MAX_BYTES
                            ))
                        )  # fmt: skip
                drawn = app.received - drawn_before
                if phase == "streaming":
                    found = discover(space.registry, self_instance_id=None, timeout=IO_TIMEOUT)
                    still = [p for p in found.peers if p.pid == app.process.pid]
                    if not still or still[0].state != "busy" or drawn == 0:
                        raise RuntimeError(
                            f"the reply was not streaming during the pings: {still} {drawn}"
                        )
                r, b = summarize(relay_t), summarize(bare_t)
                figures[phase] = r.median / b.median
                table.rows.append(
                    [f"interactive, {phase}", str(r.count), us(r.median), us(r.p99),
                     us(b.median), us(b.p99), ratio(r.median, b.median),
                     f"{drawn:,} bytes"]
                )  # fmt: skip
                _progress(f"interactive ping ({phase}) done")
        finally:
            app.close()
            if bare is not None:
                bare.close()
            server.kill()
            server.wait()
    table.notes.append(
        f"The reply streams at {CHUNKS_PER_SECOND} chunks/s from the fake Ollama (its own "
        "process). Each block interleaves a bare round trip and a relay ping; both clients "
        "are this process (zcoder's own client for the relay, a bare socket for the "
        "baseline)."
    )
    results.tables.append(table)
    results.targets.append(
        Target(
            "ping to a live interactive instance, idle: median vs bare baseline",
            "≤ 2×",
            f"{figures['idle']:.2f}×",
            figures["idle"] <= 2.0,
        )
    )
    results.targets.append(
        Target(
            "ping to a live interactive instance streaming a reply (200 chunks/s): median "
            "vs bare baseline",
            "≤ 2.5×",
            f"{figures['streaming']:.2f}×",
            figures["streaming"] <= 2.5,
        )
    )


if __name__ == "__main__":
    only = Results()
    run(only, int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
    from bench import report

    print(report.markdown_table(report.targets_table(only.targets)))
    for t in only.tables:
        print(report.markdown_table(t))
