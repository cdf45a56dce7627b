"""Helpers of the MCP tests: configuration files, real server commands and servers run for
one test, process and memory checks."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.processes import pid_alive

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EVERYTHING = BIN.parent / "npm/node_modules/.bin/mcp-server-everything"
"""@modelcontextprotocol/server-everything from npm; ``make mcp-test-servers`` installs it."""

needs_everything = pytest.mark.skipif(
    not EVERYTHING.exists(), reason=f"{EVERYTHING} is missing: `make mcp-test-servers` installs it"
)


def everything() -> dict[str, Any]:
    """server-everything's entry, over stdio."""
    return {"command": str(EVERYTHING)}


def hostile(mode: str, **env: str) -> dict[str, Any]:
    """The entry of one of tests/fixtures/mcp_hostile.py's servers."""
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "tests.fixtures.mcp_hostile", mode],
        "cwd": str(REPO),
    }
    if env:
        entry["env"] = env
    return entry


def time_server() -> dict[str, Any]:
    """mcp-server-time from PyPI (the test extra), over stdio."""
    return {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"]}


def write_servers(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


# Whether a pid is a live process (a zombie is not), under the name the MCP tests here, the
# relay's and the TUI's use.
alive = pid_alive


def wait_for(predicate: Any, timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def serving(argv: list[str], log: Path, ready: bytes, **popen: Any) -> Iterator[None]:
    """Runs the server ``argv`` in a session of its own, its output in ``log``, until the log
    shows ``ready``; kills its whole process group when the block ends."""
    with open(log, "wb") as out:
        process = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **popen,
        )
    try:
        wait_for(lambda: ready in log.read_bytes(), 60, "the server to listen")
        yield
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@dataclass
class Traced:
    """The most memory Python held at once during a ``tracing_memory`` block, once it ends."""

    peak: int = 0


@contextlib.contextmanager
def tracing_memory() -> Iterator[Traced]:
    traced = Traced()
    tracemalloc.start()
    try:
        yield traced
    finally:
        traced.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def pids(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(line) for line in path.read_text().split() if line.strip()]


def environ(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
