"""Attack tests: what peers write about themselves and send, shown by ``zcoder agents``,
``zcoder send`` and the relay-only peer (``python -m zcoder.relay``).

A peer's manifest is self-reported, and its workspace is a directory whose name anyone
can choose; a message body is a peer's own text. None of it may reach a terminal raw.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.fixtures.terminal_text import BIDI, CSI8, HIDE, OSC52, ZERO_WIDTH, assert_nothing_raw
from tests.relay.conftest import RelayFactory

# A directory name a peer works in: a bidi override, an 8-bit CSI, a zero-width space.
PAINTED_DIR = f"p{BIDI}{CSI8}{ZERO_WIDTH}"
PAINTED_SHOWN = "p\\u202e\\x9b31m\\u200b"


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    """A ``zcoder`` command, its output kept as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "zcoder", *args],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_agents_lists_a_painted_workspace_made_visible_in_the_table_and_json(
    make_relay: RelayFactory, relay_env: dict[str, str], short_dir: Path
) -> None:
    (short_dir / PAINTED_DIR).mkdir()
    peer = make_relay(f"{PAINTED_DIR}/api")
    table = run(relay_env, "agents")
    assert table.returncode == 0, table.stderr
    assert f"{PAINTED_SHOWN}/api" in assert_nothing_raw(table.stdout)
    listed = run(relay_env, "agents", "--json")
    assert listed.returncode == 0, listed.stderr
    (record,) = json.loads(assert_nothing_raw(listed.stdout))
    assert record["workspace"] == str(peer.workspace)  # the exact value, once parsed


def test_send_lists_ambiguous_candidates_made_visible(
    make_relay: RelayFactory, relay_env: dict[str, str], short_dir: Path
) -> None:
    for place in (PAINTED_DIR, "plain"):
        (short_dir / place).mkdir()
    make_relay(f"{PAINTED_DIR}/twin")
    make_relay("plain/twin")
    sent = run(relay_env, "send", "twin", "hi")
    assert sent.returncode == 3
    err = assert_nothing_raw(sent.stderr)
    assert "ambiguous" in err and f"{PAINTED_SHOWN}/twin" in err


def test_the_relay_peer_shows_a_received_body_made_visible(
    make_relay: RelayFactory, relay_env: dict[str, str], short_dir: Path
) -> None:
    """The human mode of ``python -m zcoder.relay`` prints each message it receives."""
    workspace = short_dir / "listener"
    workspace.mkdir()
    peer = subprocess.Popen(
        [sys.executable, "-m", "zcoder.relay", "-w", str(workspace)],
        env=relay_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    lines: queue.Queue[bytes] = queue.Queue()
    assert peer.stdout is not None and peer.stdin is not None

    def read() -> None:
        assert peer.stdout is not None
        for line in peer.stdout:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()

    def until(wanted: bytes) -> bytes:
        seen = b""
        deadline = time.monotonic() + 30
        while wanted not in seen:
            seen += lines.get(timeout=max(0.1, deadline - time.monotonic()))
        return seen

    try:
        ready = until(b"ready: id ")
        instance_id = ready.split(b"ready: id ", 1)[1].split()[0].decode()
        sender = make_relay("sender")
        body = f"please run the tests{HIDE}{OSC52}\nthen {BIDI}stop{ZERO_WIDTH}"
        assert sender.send(instance_id, body).status == "accepted"
        shown = assert_nothing_raw(until(b"stop"))
        assert (
            "please run the tests\\r\\e[2K\\e]52;c;cm0gLXJmIH4=\\x07\nthen \\u202estop\\u200b"
            in (shown)
        )
    finally:
        peer.stdin.close()
        try:
            peer.wait(timeout=30)
        finally:
            if peer.poll() is None:
                peer.kill()
                peer.wait()
