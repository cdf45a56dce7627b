"""Helpers of the MCP tests: configuration files, real server commands, process checks."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

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


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def wait_for(predicate: Any, timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def pids(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(line) for line in path.read_text().split() if line.strip()]


def environ(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
