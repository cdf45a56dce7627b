"""Relay-only peers as real separate processes: discovery, exchange, failures."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from tests.relay.conftest import write_manifest
from tests.relay.wire import send_json
from zcoder.relay.framing import encode_frame
from zcoder.relay.protocol import Ack, decode_flat_object

pytestmark = pytest.mark.timeout(90)

MULTILINE = (
    "users.name was renamed to users.display_name.\n"
    '\tUpdate consumers — «vérifiez» 测试 ✓\n"quoted" \\ back'
)


def test_two_peer_processes_discover_each_other(make_peer):
    alpha = make_peer("alpha")
    beta = make_peer("beta")
    [seen_by_alpha] = alpha.discover()
    [seen_by_beta] = beta.discover()
    assert seen_by_alpha["instance_id"] == beta.instance_id
    assert seen_by_beta["instance_id"] == alpha.instance_id
    assert seen_by_alpha["workspace"] == str(beta.workspace.resolve())
    assert seen_by_alpha["state"] == "ready"


def test_ping_and_enqueue_between_two_peer_processes(make_peer):
    alpha = make_peer("alpha")
    beta = make_peer("beta")
    sent = alpha.send(beta.instance_id, MULTILINE)
    assert sent["status"] == "accepted"
    assert sent["text"] == (
        f"Message accepted by beta ({beta.instance_id}); queued at position 1. "
        "Delivery does not imply task completion."
    )
    received = beta.wait_for("received")
    assert received["body"] == MULTILINE
    assert received["sender_instance_id"] == alpha.instance_id
    assert received["sender_pid"] == alpha.pid
    # A relay-only peer is not an interactive instance: shown as such, from the directory
    # it runs in (the kernel's word), whatever it names as its workspace.
    assert received["sender_project"] == "zcoder send"
    assert received["sender_workspace"] == os.path.realpath(os.getcwd())  # its cwd
    assert received["message_id"] == f"{alpha.instance_id}-1"


def test_busy_peer_queues_and_delivers_in_order(make_peer):
    alpha = make_peer("alpha")
    beta = make_peer("beta", consume=False)
    beta.ask("busy", "info")
    for n in range(3):
        assert alpha.send(beta.instance_id, f"task {n}")["status"] == "accepted"
    bodies = []
    for _ in range(3):
        bodies.append(beta.ask("claim", "received")["body"])
        beta.ask("complete", "info")
    assert bodies == ["task 0", "task 1", "task 2"]


def test_send_to_a_paused_peer_says_paused(make_peer):
    alpha = make_peer("alpha")
    beta = make_peer("beta")
    beta.ask("pause", "info")
    sent = alpha.send(beta.instance_id, "hello")
    assert sent["status"] == "paused"
    assert sent["text"] == "beta is paused and did not accept the message"
    [peer] = alpha.discover()
    assert peer["state"] == "paused"


def test_project_name_or_pid_alone_is_not_a_target(make_peer):
    alpha = make_peer("alpha")
    beta = make_peer("beta")
    for target in ("beta", str(beta.pid), beta.instance_id[:-1]):
        sent = alpha.send(target, "hello")
        assert sent["status"] is None
        assert "no live zcoder instance" in sent["text"]


def test_send_after_receiver_exit_fails_cleanly(make_peer):
    alpha = make_peer("alpha")
    beta = make_peer("beta")
    target = beta.instance_id
    beta.close()
    sent = alpha.send(target, "hello")
    assert sent["status"] is None
    assert "no live zcoder instance" in sent["text"]


def test_killed_peer_leaves_a_manifest_that_discovery_ignores(make_peer, registry):
    alpha = make_peer("alpha")
    beta = make_peer("beta")
    beta.kill()
    assert (registry / f"a-{beta.instance_id}.json").exists()
    assert alpha.discover() == []
    sent = alpha.send(beta.instance_id, "hello")
    assert sent["status"] is None


def test_peer_quits_cleanly_on_sigterm(make_peer, registry):
    beta = make_peer("beta")
    os.kill(beta.proc.pid, 15)
    beta.proc.wait(timeout=10)
    assert not (registry / f"a-{beta.instance_id}.json").exists()
    assert not (registry / f"a-{beta.instance_id}.sock").exists()


def _fake_silent_instance(registry, instance_id, received, stop):
    """Answers pings like a live instance but swallows every enqueue without an ack."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(registry / f"a-{instance_id}.sock"))
    srv.listen(8)
    srv.settimeout(0.2)
    write_manifest(registry, instance_id, project="silent", workspace="/x/silent", model="")

    def serve():
        held = []
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            conn.settimeout(2)
            data = b""
            try:
                while b"\n" not in data or len(data.partition(b"\n")[2]) < int(
                    data.split(b" ")[1].partition(b"\n")[0]
                ):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except TimeoutError:
                pass
            obj = decode_flat_object(data.partition(b"\n")[2])
            if obj["type"] == "ping":
                conn.sendall(encode_frame(Ack(str(obj["message_id"]), "pong").to_payload(), 4096))
                conn.close()
            else:
                received.append(obj)
                held.append(conn)  # never answered
        for conn in held:
            conn.close()
        srv.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_sender_timeout_retries_once_with_the_same_message_id(make_relay, relay_env, registry):
    env = {**relay_env, "ZCODER_RELAY_IO_TIMEOUT": "1"}
    sender = make_relay("sender", env=env)
    received: list[dict[str, object]] = []
    stop = threading.Event()
    thread = _fake_silent_instance(registry, f"{os.getpid()}-31337", received, stop)
    try:
        started = time.monotonic()
        result = sender.send(f"{os.getpid()}-31337", "are you there?")
        elapsed = time.monotonic() - started
    finally:
        stop.set()
        thread.join()
    assert result.status is None
    assert result.text == "delivery to silent failed: no acknowledgement before the deadline"
    assert [obj["message_id"] for obj in received] == [result.message_id, result.message_id]
    assert elapsed < 10


def test_spool_deleted_under_running_instance_reports_unavailable(make_relay):
    import shutil

    relay = make_relay("alpha")
    assert relay.spool is not None
    shutil.rmtree(relay.spool.root)
    status = relay.status()
    assert not status.available
    assert "spool" in (status.reason or "")
    assert relay.claim_one() is None
    relay.stop()


def test_registry_deleted_under_running_instance_reports_unavailable(make_relay, registry):
    import shutil

    relay = make_relay("alpha")
    shutil.rmtree(registry)
    status = relay.status()
    assert not status.available
    relay.refresh_manifest(model="x")  # nothing crashes
    relay.stop()


def test_exchange_under_the_c_locale_counts_code_points(make_peer, relay_env):
    env = {**relay_env, "LC_ALL": "C", "LANG": "C", "ZCODER_RELAY_MAX_MESSAGE_CHARS": "12"}
    alpha = make_peer("alpha", env=env)
    beta = make_peer("beta", env=env)
    twelve = "日本語のテキスト✓✓✓✓"  # 12 code points, 36 bytes
    assert len(twelve) == 12
    assert alpha.send(beta.instance_id, twelve)["status"] == "accepted"
    assert beta.wait_for("received")["body"] == twelve
    too_long = twelve + "!"
    sent = alpha.send(beta.instance_id, too_long)
    assert sent["status"] is None and "limit is 12" in sent["text"]


def test_a_relay_that_stops_itself_closes_its_socket_so_nothing_more_is_accepted(
    make_relay, registry
):
    """An internal error (here: the spool cannot move a message to processing/) stops the
    relay; from then on a sender is refused at connect, never told `accepted`."""
    receiver = make_relay("receiver")
    sender = make_relay("sender")
    assert receiver.spool is not None
    assert sender.send(receiver.instance_id, "first").status == "accepted"
    processing = receiver.spool.root / "processing"
    processing.rmdir()
    processing.write_text("not a directory")
    assert receiver.claim_one() is None  # the claim fails: the relay stops itself
    assert not receiver.status().available
    assert not (registry / f"a-{receiver.instance_id}.sock").exists()
    assert not (registry / f"a-{receiver.instance_id}.json").exists()
    assert receiver.socket_path is not None
    with pytest.raises(OSError):
        send_json(receiver.socket_path, {"protocol": 1, "type": "ping", "message_id": "p"})
    receiver.stop()  # still clean afterwards
