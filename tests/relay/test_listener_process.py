"""The listener in its own process: what it inherits, how it ends, what the parent sees.

Also the listener loop itself run on a thread (``Listener.start``), where a fault can be
injected: a broken selector, a decision that raises.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from tests.relay.conftest import spool_envelope
from tests.relay.wire import enqueue_obj, send_json
from zcoder.relay.listener import Listener
from zcoder.relay.protocol import Envelope
from zcoder.relay.receiver import Receiver
from zcoder.relay.spool import QuarantinedMessage, Spool

pytestmark = pytest.mark.timeout(90)


def _wait(condition, what: str, deadline: float = 20.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _ping(relay) -> dict[str, object]:
    return send_json(
        relay.socket_path,
        {
            "protocol": 1,
            "type": "ping",
            "message_id": "p",
            "target_instance_id": relay.instance_id,
        },
    )


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# -- the process ----------------------------------------------------------------------


def test_the_listener_is_a_child_process_that_owns_the_socket(make_relay):
    relay = make_relay("alpha")
    assert relay.listener is not None
    pid = relay.listener.pid
    assert pid is not None and pid != os.getpid()
    assert _ping(relay)["status"] == "pong"
    # The listening socket is open in the child only: this process closed its copy.
    listening = _listening_sockets(pid)
    assert listening, "the child holds a listening socket"
    assert not (_listening_sockets(os.getpid()) & listening)


def _listening_sockets(pid: int) -> set[str]:
    """Socket inodes the process has open that /proc/net/unix lists as listening."""
    listening = set()
    with open("/proc/net/unix") as table:
        next(table)
        for line in table:
            fields = line.split()
            if fields[3] == "00010000":  # __SO_ACCEPTCON
                listening.add(fields[6])
    held = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("socket:["):
                held.add(link[8:-1])
    return held & listening


def test_the_child_inherits_no_descriptor_but_its_own(make_relay, tmp_path):
    # A descriptor this process holds without close-on-exec must not reach the child.
    leak = os.open(tmp_path / "leak", os.O_WRONLY | os.O_CREAT, 0o600)
    os.set_inheritable(leak, True)
    try:
        relay = make_relay("alpha")
        assert relay.listener is not None and relay.listener.pid is not None
        pid = relay.listener.pid
        kinds = []
        for fd in sorted(os.listdir(f"/proc/{pid}/fd"), key=int):
            try:
                kinds.append((int(fd), os.readlink(f"/proc/{pid}/fd/{fd}")))
            except FileNotFoundError:
                continue  # the listing itself
        targets = [target for _fd, target in kinds]
        # stdin and stdout are /dev/null, stderr a pipe to the parent; the rest are its
        # sockets (the listening one, its two channels, its own wake-up pair) and epoll.
        assert targets[0] == "/dev/null" and targets[1] == "/dev/null"
        assert targets[2].startswith("pipe:[")
        assert all(t.startswith(("socket:[", "anon_inode:")) for t in targets[3:]), targets
        # Nothing this process has open is open there too (each end of a socket pair has
        # an inode of its own; only the stderr pipe is shared, by design).
        mine = set()
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                mine.add(os.readlink(f"/proc/self/fd/{fd}"))
        shared = (set(targets) & mine) - {"/dev/null", targets[2]}
        assert not {t for t in shared if not t.startswith("anon_inode:")}, shared
        # Its own session: no terminal signal reaches it.
        assert os.getsid(pid) == pid
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
    finally:
        os.close(leak)


def test_a_killed_listener_is_noticed_and_the_instance_stops_advertising(make_relay, registry):
    unavailable = threading.Event()
    reasons: list[str] = []

    def gone(reason: str) -> None:
        reasons.append(reason)
        unavailable.set()

    relay = make_relay("alpha", on_unavailable=gone)
    assert relay.listener is not None and relay.listener.pid is not None
    pid = relay.listener.pid
    os.kill(pid, signal.SIGKILL)
    assert unavailable.wait(10)
    assert "SIGKILL" in reasons[0]
    status = relay.status()
    assert not status.available and "SIGKILL" in (status.reason or "")
    assert not (registry / f"a-{relay.instance_id}.json").exists()
    assert not (registry / f"a-{relay.instance_id}.sock").exists()
    assert not _alive(pid)  # reaped: no zombie left
    relay.stop()  # still clean after a death


def test_a_crashed_listener_is_noticed_with_its_reason(make_relay, registry):
    unavailable = threading.Event()
    relay = make_relay("alpha", on_unavailable=lambda _reason: unavailable.set())
    assert relay.listener is not None and relay.listener.pid is not None
    os.kill(relay.listener.pid, signal.SIGSEGV)
    assert unavailable.wait(10)
    assert "SIGSEGV" in (relay.status().reason or "")
    assert not (registry / f"a-{relay.instance_id}.json").exists()
    # No peer is told "accepted" by a socket nobody serves.
    with pytest.raises(OSError):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(registry / f"a-{relay.instance_id}.sock"))
    relay.stop()


def test_a_listener_slow_to_start_on_a_loaded_machine_still_becomes_ready(
    make_relay, tmp_path, monkeypatch
):
    """The child's interpreter starting takes longer than any later command may (a build
    or a test suite on the other cores): the relay waits for it, and is ready, as the
    header says. Here it starts 7 s late, past COMMAND_TIMEOUT."""
    import sys

    from zcoder.relay.listener_process import COMMAND_TIMEOUT, START_TIMEOUT

    late = 7.0
    assert COMMAND_TIMEOUT < late < START_TIMEOUT
    python = tmp_path / "slow-python"
    python.write_text(f'#!/bin/sh\nsleep {late:g}\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(python))
    relay = make_relay("alpha")
    assert relay.status().available, relay.status().reason
    assert relay.ready
    assert _ping(relay)["status"] == "pong"


def test_stop_ends_and_reaps_the_child(make_relay, registry):
    relay = make_relay("alpha")
    assert relay.listener is not None and relay.listener.pid is not None
    pid = relay.listener.pid
    relay.stop()
    assert not _alive(pid)
    assert not (registry / f"a-{relay.instance_id}.sock").exists()


def test_the_child_ends_when_its_parent_is_killed(tmp_path):
    """A zcoder killed with SIGKILL runs no cleanup: its listener sees the end of the
    command channel and exits at once, closing the socket (no peer is answered)."""
    import subprocess
    import sys

    registry = tmp_path / "reg"
    registry.mkdir(mode=0o700)
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from zcoder.relay.instance import Relay\n"
        "from zcoder.relay.settings import load_relay_settings\n"
        "relay = Relay(load_relay_settings({}), workspace=Path(sys.argv[1]),"
        " env={'ZCODER_RELAY_DIR': sys.argv[2], 'HOME': sys.argv[1]})\n"
        "status = relay.start()\n"
        "print(relay.listener.pid, relay.socket_path, flush=True)\n"
        "time.sleep(600)\n"
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(workspace), str(registry)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        child_pid, sock = parent.stdout.readline().split()
        child = int(child_pid)
        assert _alive(child)
        parent.kill()
        parent.wait()
        _wait(lambda: not _alive(child), "the orphaned listener to exit")
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with pytest.raises(OSError), client:
            client.connect(sock)
    finally:
        parent.kill()
        parent.wait()


def test_pause_applies_before_it_returns(make_relay):
    alpha, beta = make_relay("alpha"), make_relay("beta")
    for n in range(20):
        beta.pause()
        assert send_json(beta.socket_path, enqueue_obj(beta, alpha, f"p{n}"))["status"] == "paused"
        beta.resume()
        ack = send_json(beta.socket_path, enqueue_obj(beta, alpha, f"r{n}"))
        assert ack["status"] == "accepted"
        assert ack["state"] == "ready"
        claimed = beta.claim_one()
        assert claimed is not None
        beta.complete(claimed)


def test_accepted_messages_nudge_the_parent(make_relay):
    nudged = threading.Event()
    alpha = make_relay("alpha")
    beta = make_relay("beta", on_message=nudged.set)
    assert alpha.send(beta.instance_id, "hello").status == "accepted"
    assert nudged.wait(10)
    claimed = beta.claim_one()
    assert claimed is not None and claimed.envelope.body == "hello"
    assert beta.sequences().last_accepted == 1


@pytest.mark.parametrize("wait", [True, False], ids=["start", "start-then-finish"])
def test_ready_is_said_only_once_peers_can_find_the_instance(
    relay_env, short_dir, monkeypatch, wait
):
    """Whoever sees ``ready`` (the app's header, another thread) can already be found: the
    manifest is written before ``ready`` turns true, never after (CI once sent in between)."""
    from zcoder.relay import Relay, load_relay_settings
    from zcoder.relay.client import discover
    from zcoder.relay.registry import write_manifest

    def found(relay: Relay) -> bool:
        assert relay.registry is not None
        peers = discover(relay.registry, self_instance_id=None, timeout=5.0).peers
        return any(p.instance_id == relay.instance_id for p in peers)

    seen: list[tuple[bool, bool]] = []  # (ready, found) at each manifest write
    relays: list[Relay] = []

    def watched_write(registry, manifest):
        relay = relays[0]
        seen.append((relay.ready, found(relay)))
        write_manifest(registry, manifest)

    monkeypatch.setattr("zcoder.relay.advert.write_manifest", watched_write)
    workspace = short_dir / "alpha"
    workspace.mkdir()
    relay = Relay(load_relay_settings(relay_env), workspace=workspace, env=relay_env)
    relays.append(relay)
    try:
        relay.start(wait=wait)
        if not wait:
            relay.finish_start()
            _wait(lambda: relay.ready, "the relay to become ready")
        assert seen and seen[0] == (False, False), "ready was said before the manifest existed"
        assert relay.ready
        assert found(relay)
    finally:
        relay.stop()


def test_refusals_are_logged_in_the_parents_log(make_relay, caplog):
    relay = make_relay("alpha")
    with caplog.at_level("INFO", logger="zcoder.relay.listener"):
        ack = send_json(relay.socket_path, {"protocol": 1, "type": "enqueue"})
        assert ack["status"] in ("invalid", "wrong_target")
        _wait(
            lambda: any("relay refused" in r.getMessage() for r in caplog.records),
            "the child's log line",
        )


# -- the loop on a thread (faults injected) ---------------------------------------------


@pytest.fixture
def thread_listener(tmp_path: Path):
    spool = Spool(tmp_path / "spool", "1-1", 65536, 8000)
    spool.create()
    receiver = Receiver(
        "1-1",
        spool,
        max_message_chars=8000,
        max_queue=16,
        state=lambda: "ready",
        sender_check=lambda *_: None,
    )
    path = tmp_path / "l.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(16)
    deaths: list[BaseException] = []
    died = threading.Event()

    def on_death(exc: BaseException) -> None:
        deaths.append(exc)
        died.set()

    listener = Listener(server, receiver, max_bytes=65536, io_timeout=2.0, on_death=on_death)
    listener.start()
    yield listener, path, receiver, died, deaths
    listener.stop()


PING = {"protocol": 1, "type": "ping", "message_id": "p", "target_instance_id": "1-1"}


def test_a_broken_loop_reports_its_death(thread_listener):
    listener, _path, _receiver, died, deaths = thread_listener

    def broken(*_args, **_kwargs):
        raise RuntimeError("selector exploded")

    listener._selector.select = broken
    listener._wake_w.send(b"x")  # wake the loop so it meets the broken selector
    assert died.wait(5)
    assert "selector exploded" in repr(deaths[0])
    assert not listener.alive and listener.error is deaths[0]


def test_one_request_that_breaks_the_decision_does_not_stop_the_listener(thread_listener):
    listener, path, receiver, _died, _deaths = thread_listener
    original = receiver.decide
    calls = {"n": 0}

    def flaky(payload, peer):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("bug")
        return original(payload, peer)

    receiver.decide = flaky
    with pytest.raises((AssertionError, ValueError, json.JSONDecodeError)):
        send_json(path, PING)
    assert send_json(path, PING)["status"] == "pong"
    assert listener.alive


def _envelope(n: int, body: str = "secret task {n}") -> Envelope:
    return spool_envelope(n, target="1-1", sender="2-2", body=body)


def test_spares_are_used_only_when_pristine(tmp_path: Path):
    spool = Spool(tmp_path / "spool", "1-1", 65536, 8000)
    spool.create()
    assert spool.top_up_spares(8) == 8
    # Spoil every spare: written to, and one replaced by a link.
    spares = sorted((spool.root / "tmp").iterdir())
    for spare in spares[1:]:
        spare.write_bytes(b"not empty")
    spares[0].unlink()
    spares[0].symlink_to(tmp_path / "elsewhere")
    for n in range(10):
        envelope = _envelope(n, body="task {n}")
        assert spool.store(envelope, envelope.to_payload(), 64)[0] == "accepted"
    assert not (tmp_path / "elsewhere").exists()
    for n, entry in enumerate(sorted((spool.root / "inbox").iterdir())):
        assert stat.S_ISREG(entry.lstat().st_mode)
        assert json.loads(entry.read_bytes())["body"] == f"task {n}"


def test_a_done_message_s_file_becomes_an_empty_spare(tmp_path: Path):
    """Completing (or discarding) a message empties its file and renames it into tmp/ as
    a spare, which a later store uses; the done marker is kept and the text is gone."""
    spool = Spool(tmp_path / "spool", "1-1", 65536, 8000)
    spool.create()
    tmp = spool.root / "tmp"
    for n in range(3):
        envelope = _envelope(n)
        assert spool.store(envelope, envelope.to_payload(), 64)[0] == "accepted"
    assert not list(tmp.iterdir())  # no spare was made: the stores created their files
    first = spool.claim_one()
    assert first is not None and not isinstance(first, QuarantinedMessage)
    spool.complete(first)
    spares = list(tmp.iterdir())
    assert [p.name.startswith("spare-") for p in spares] == [True]
    assert spares[0].stat().st_size == 0 and spares[0].stat().st_nlink == 1
    assert (spool.root / "done" / first.path.name).exists()
    assert not first.path.exists()
    assert not any(b"secret task 0" in p.read_bytes() for p in spool.root.rglob("*") if p.is_file())
    # The next store goes through that spare: it is gone from tmp/, the message is whole.
    envelope = _envelope(9)
    assert spool.store(envelope, envelope.to_payload(), 64)[0] == "accepted"
    assert not list(tmp.iterdir())
    stored = next(p for p in (spool.root / "inbox").iterdir() if "2-2-9" in p.name)
    assert json.loads(stored.read_bytes())["body"] == "secret task 9"


def test_a_done_file_with_another_link_is_removed_not_reused(tmp_path: Path):
    """A payload file somebody linked elsewhere is never emptied nor reused: removed."""
    spool = Spool(tmp_path / "spool", "1-1", 65536, 8000)
    spool.create()
    envelope = _envelope(0)
    assert spool.store(envelope, envelope.to_payload(), 64)[0] == "accepted"
    claimed = spool.claim_one()
    assert claimed is not None and not isinstance(claimed, QuarantinedMessage)
    outside = tmp_path / "kept-elsewhere.json"
    os.link(claimed.path, outside)
    spool.complete(claimed)
    assert not claimed.path.exists()
    assert not list((spool.root / "tmp").iterdir())
    assert b"secret task 0" in outside.read_bytes()  # the other link is left as it was


def test_the_foreground_keeps_spares_for_a_full_queue(make_relay, relay_env):
    """Stores use the spares the foreground made; it makes new ones as they are used."""
    env = {**relay_env, "ZCODER_RELAY_MAX_QUEUE": "12"}
    beta = make_relay("beta", env=env)
    alpha = make_relay("alpha")
    assert beta.spool is not None
    tmp = beta.spool.root / "tmp"

    def spares() -> set[str]:
        return {p.name for p in tmp.iterdir() if p.name.startswith("spare-")}

    _wait(lambda: len(spares()) == 12, "twelve spares")
    before = spares()
    for n in range(5):
        assert alpha.send(beta.instance_id, f"task {n}").status == "accepted"
    # Stored through spares (five of them are gone), replaced by new ones.
    _wait(lambda: len(spares()) == 12 and len(before - spares()) == 5, "the spares replaced")
    inbox = sorted((beta.spool.root / "inbox").iterdir())
    assert [json.loads(p.read_bytes())["body"] for p in inbox] == [f"task {n}" for n in range(5)]


def test_nudges_merge_in_time_and_keep_their_order() -> None:
    from zcoder.relay.control import ACCEPTED, EventWriter, LineReader, Synced

    now = [100.0]
    ours, theirs = socket.socketpair()
    with ours, theirs:
        writer = EventWriter(ours, clock=lambda: now[0])
        reader = LineReader(theirs)
        theirs.setblocking(False)
        writer.send(ACCEPTED)  # the first goes a moment later, out of the sender's way
        assert reader.lines() == []
        assert writer.due() == pytest.approx(EventWriter.FIRST_NUDGE_DELAY)
        now[0] += EventWriter.FIRST_NUDGE_DELAY
        assert writer.flush()
        for _ in range(50):
            writer.send(ACCEPTED)  # a burst: held back as one
        assert [e["op"] for e in reader.lines()] == ["accepted"]
        assert writer.due() == pytest.approx(EventWriter.NUDGE_INTERVAL)
        now[0] += EventWriter.NUDGE_INTERVAL
        assert writer.due() == 0.0
        assert writer.flush()
        assert [e["op"] for e in reader.lines()] == ["accepted"]
        assert writer.due() is None
        # Any other event takes a held-back nudge with it, first.
        writer.send(ACCEPTED)
        writer.send(Synced(1))
        assert [e["op"] for e in reader.lines()] == ["accepted", "synced"]


def test_a_workspace_cannot_plant_the_listeners_code(make_relay, tmp_path, monkeypatch):
    """The listener is `python -m zcoder.relay.listener_service`: a hostile repository
    holding its own `zcoder/relay/listener_service.py`, with zcoder started inside it,
    must not have that file run (the child runs with -P, from /)."""
    marker = tmp_path / "planted-ran"
    fake = tmp_path / "repo" / "zcoder" / "relay"
    fake.mkdir(parents=True)
    for package in (fake.parent, fake):
        (package / "__init__.py").write_text("")
    (fake / "listener_service.py").write_text(f"open({str(marker)!r}, 'w').write('pwned')\n")
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.setenv("PYTHONPATH", "")
    relay = make_relay("alpha")
    assert relay.ready and _ping(relay)["status"] == "pong"
    assert not marker.exists()
