"""``zcoder agents --host`` and ``zcoder send HOST:NAME`` against a real sshd, with a real
receiving relay on the far side.

The "other machine" is this one reached through the test's own OpenSSH server on
127.0.0.1 (tests/fixtures/sshd.py); ssh runs this checkout's zcoder there
(ZCODER_REMOTE_ZCODER) with a registry, home and runtime directory of the far side's alone.
The receiver is a relay started in that registry; the sender's own registry must stay
untouched (nothing is registered here), and no process of the exchange, on either side,
holds a listening network socket.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import wait_until
from tests.fixtures.far_side import DEADLINE, Sides, claimed_from, sides
from tests.fixtures.listening import children_of, inet_listeners
from tests.fixtures.sshd import SshServer, available
from zcoder.relay import sender_label
from zcoder.relay.host_cli import EXIT_HOST_FAILED
from zcoder.relay.hosts import this_host_label

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(available() is not None, reason=str(available())),
]
__all__ = ["sides"]  # the fixture (tests.fixtures.far_side)


def _exchange_processes(sender: subprocess.Popen[str], sshd: SshServer) -> set[int]:
    """Every process of the exchange: the sender and its ssh here, and there what sshd
    started for the connection (the remote zcoder send and its listener)."""
    pids = children_of(sender.pid)
    for connection in sshd.connection_pids():
        pids |= children_of(connection)
    return pids


# -- zcoder agents --host --------------------------------------------------------------------


def test_agents_host_lists_the_far_machines_agents_as_the_local_listing_is(sides: Sides) -> None:
    receiver = sides.receiver()
    try:
        shown = sides.zcoder("agents", "--host", sides.host)
        assert shown.returncode == 0, shown.stderr
        header, row = shown.stdout.splitlines()
        assert header.startswith("NAME") and "WORKSPACE" in header
        assert receiver.instance_id is not None
        assert row.startswith("far ") and receiver.instance_id in row
        as_json = sides.zcoder("agents", "--host", sides.host, "--json")
        assert as_json.returncode == 0, as_json.stderr
        [record] = json.loads(as_json.stdout)
        assert record["instance_id"] == receiver.instance_id
        assert record["name"] == "far" and record["host"] == sides.host
        assert record["workspace"] == str(receiver.workspace)
    finally:
        receiver.stop()
    assert not Path(sides.here["ZCODER_RELAY_DIR"]).exists()  # nothing registered here
    empty = sides.zcoder("agents", "--host", sides.host)
    assert empty.stdout == f"No zcoder instances are available on {sides.host}.\n"


# -- zcoder send HOST:NAME ---------------------------------------------------------------------

HOSTILE = (
    "$(touch {p}/dollar) `touch {p}/backtick`; touch {p}/semicolon\n"
    "-n line two | touch {p}/pipe && touch {p}/and\n'\"\\ end"
)


def test_send_wait_delivers_there_as_data_and_brings_the_receipt_back(sides: Sides) -> None:
    receiver = sides.receiver()
    proof = sides.root / "proof"
    proof.mkdir()
    message = HOSTILE.format(p=proof)
    sender = sides.start("send", f"{sides.host}:far", "--wait", stdin=message)
    try:
        claimed = claimed_from(receiver, sender)
        # While it waits for the receipt: no process of the exchange, here or there,
        # listens on a network port.
        assert inet_listeners(_exchange_processes(sender, sides.sshd)) == []
        envelope = claimed.envelope
        assert envelope.body == message  # every byte, nothing read by a shell
        assert envelope.sender_kind == "send"  # never an instance's standing
        assert envelope.sender_project == f"SSH from {this_host_label()}"
        assert sender_label(envelope).startswith(f"via SSH from {this_host_label()}, pid ")
        assert receiver.send_progress(envelope, "started") == "accepted"
        assert receiver.send_receipt(envelope, "completed", "12 passed\x1b[2J") == "accepted"
        out, err = sender.communicate(timeout=DEADLINE)
    finally:
        sender.kill()
        receiver.stop()
    assert sender.returncode == 0, err
    accepted, started, receipt = out.splitlines()
    assert accepted.startswith(f"Message accepted by far ({receiver.instance_id})")
    assert (started, receipt) == ("started", "completed: 12 passed\\e[2J")
    assert list(proof.iterdir()) == []  # no shell ran a word of the message
    assert not Path(sides.here["ZCODER_RELAY_DIR"]).exists()


def test_send_json_passes_the_remote_records_and_the_outcomes_exit_status(sides: Sides) -> None:
    receiver = sides.receiver()
    sender = sides.start("send", "--json", "--wait", f"{sides.host}:far", stdin="-x task")
    try:
        claimed = claimed_from(receiver, sender)
        assert claimed.envelope.body == "-x task"
        assert receiver.send_receipt(claimed.envelope, "failed", "2 failed") == "accepted"
        out, err = sender.communicate(timeout=DEADLINE)
    finally:
        sender.kill()
        receiver.stop()
    assert sender.returncode == 10, err  # failed, as zcoder send --wait says it there
    first, last = (json.loads(line) for line in out.splitlines())
    assert first["status"] == "accepted" and first["target"] == receiver.instance_id
    assert last == {"outcome": "failed", "summary": "2 failed"}


def test_the_remote_zcoder_sends_answer_and_exit_status_come_back(sides: Sides) -> None:
    sent = sides.zcoder("send", f"{sides.host}:nobody", "hello")
    assert sent.returncode == 3, sent.stderr  # no such instance there
    assert "no live zcoder instance is named or has the id 'nobody'" in sent.stderr


# -- what is refused before ssh runs ---------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "-oProxyCommand=touch {p}/x:far",
        "-F{p}/cfg:far",
        "zcoder-test-host;touch {p}/x:far",
        "$(touch {p}/x):far",
        "zcoder-test-host:$(touch {p}/x)",
        "zcoder-test-host:`touch {p}/x`",
        "zcoder-test-host:-far",
        "zcoder-test-host:far;touch {p}/x",
        "zcoder-test-host:",
        ":far",
        "-lroot@zcoder-test-host:far",
        "zcoder-test-host:far name",
    ],
)
def test_hostile_targets_are_refused_before_anything_runs(sides: Sides, target: str) -> None:
    proof = sides.root / "proof"
    proof.mkdir()
    sent = sides.zcoder("send", "--", target.format(p=proof), "hello")
    assert sent.returncode == 2, sent.stderr
    assert "nothing was sent" in sent.stderr
    assert list(proof.iterdir()) == []
    assert sides.sshd.connection_pids() == []  # ssh was never run


@pytest.mark.parametrize("host", ["-oProxyCommand=touch {p}/x", "box/srv", "a b", "box;id"])
def test_agents_host_refuses_what_is_not_a_host(sides: Sides, host: str) -> None:
    proof = sides.root / "proof"
    proof.mkdir()
    shown = sides.zcoder("agents", f"--host={host.format(p=proof)}")
    assert shown.returncode == 2
    assert "--host takes [user@]host[:port]" in shown.stderr
    assert list(proof.iterdir()) == []


# -- when ssh or the far side fails, the error says which -------------------------------------


def _other_key_config(sides: Sides) -> str:
    """An ssh configuration for the same host with a key it does not accept."""
    key = sides.root / "stranger"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    config = sides.sshd.client_config.read_text()
    user_key = str(sides.sshd.root / "user_key")
    stranger = sides.root / "stranger_config"
    stranger.write_text(config.replace(f"IdentityFile {user_key}", f"IdentityFile {key}"))
    return f"ssh -F {shlex.quote(str(stranger))}"


def test_failures_say_which_and_exit_with_their_own_status(sides: Sides) -> None:
    refused = sides.zcoder("agents", "--host", sides.host, ZCODER_SSH=_other_key_config(sides))
    assert refused.returncode == EXIT_HOST_FAILED
    assert f"{sides.host} refused the login (authentication failed" in refused.stderr

    missing = sides.zcoder("agents", "--host", sides.host, ZCODER_REMOTE_ZCODER="no-such-zcoder")
    assert missing.returncode == EXIT_HOST_FAILED
    assert f"zcoder is not installed on {sides.host}" in missing.stderr
    sent = sides.zcoder("send", f"{sides.host}:far", "hi", ZCODER_REMOTE_ZCODER="no-such-zcoder")
    assert sent.returncode == EXIT_HOST_FAILED
    assert f"zcoder is not installed on {sides.host}" in sent.stderr

    unknown = sides.root / "unknown_hosts"
    unknown.write_text("")
    stranger = sides.root / "stranger_host_config"
    known = str(sides.sshd.root / "known_hosts")
    stranger.write_text(sides.sshd.client_config.read_text().replace(known, str(unknown)))
    doubted = sides.zcoder("agents", "--host", sides.host, ZCODER_SSH=f"ssh -F {stranger}")
    assert doubted.returncode == EXIT_HOST_FAILED
    assert f"{sides.host}'s host key is not the one known" in doubted.stderr

    unreachable = sides.zcoder("agents", "--host", f"127.0.0.1:{_closed_port()}")
    assert unreachable.returncode == EXIT_HOST_FAILED
    assert "could not be reached" in unreachable.stderr


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again at once: nothing listens there


def test_an_answer_that_is_not_a_listing_is_refused_and_hostile_text_is_escaped(
    sides: Sides,
) -> None:
    bad = sides.root / "bad.txt"
    bad.write_text("not json\x1b]0;owned\x07")
    shown = sides.zcoder("agents", "--host", sides.host, ZCODER_REMOTE_ZCODER=f"cat {bad} #")
    assert shown.returncode == EXIT_HOST_FAILED
    assert "is not zcoder agents --json (not JSON" in shown.stderr
    wrong = sides.root / "wrong.json"
    wrong.write_text(json.dumps([{"name": "x", "project": "p", "pid": "1"}]))
    shown = sides.zcoder("agents", "--host", sides.host, ZCODER_REMOTE_ZCODER=f"cat {wrong} #")
    assert shown.returncode == EXIT_HOST_FAILED
    assert "is not zcoder agents --json (a record has no state)" in shown.stderr

    hostile = sides.root / "hostile.json"
    record = {
        "name": "api",
        "project": "p\x1b]0;owned\x07",
        "pid": 42,
        "state": "ready",
        "instance_id": "42-1",
        "workspace": "/w\u202e",
    }
    hostile.write_text(json.dumps([record]))
    shown = sides.zcoder("agents", "--host", sides.host, ZCODER_REMOTE_ZCODER=f"cat {hostile} #")
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\u202e" not in shown.stdout
    assert "p\\e]0;owned\\x07" in shown.stdout and "/w\\u202e" in shown.stdout
    as_json = sides.zcoder(
        "agents", "--host", sides.host, "--json", ZCODER_REMOTE_ZCODER=f"cat {hostile} #"
    )
    assert "\x1b" not in as_json.stdout and "\\u001b" in as_json.stdout
    assert json.loads(as_json.stdout) == [{**record, "host": sides.host}]


def test_a_wait_there_ends_when_the_connection_does(sides: Sides) -> None:
    """Ctrl+C here (or a dropped connection) leaves no zcoder send waiting there."""
    receiver = sides.receiver()
    registry = Path(sides.there["ZCODER_RELAY_DIR"])
    sender = sides.start("send", f"{sides.host}:far", "--wait", stdin="long task")
    try:
        claimed_from(receiver, sender)
        assert len(list(registry.glob("a-*.json"))) == 2  # the receiver and zcoder send there
        sender.send_signal(signal.SIGINT)  # zcoder send here only, not its ssh
        _, err = sender.communicate(timeout=DEADLINE)
        assert sender.returncode == 130 and "interrupted" in err
        wait_until(
            lambda: len(list(registry.glob("a-*.json"))) == 1,
            timeout=DEADLINE,
            what="the remote zcoder send to end",
        )
    finally:
        sender.kill()
        receiver.stop()


def test_via_ssh_is_only_for_a_send_that_ssh_runs(sides: Sides) -> None:
    sent = sides.zcoder("send", "--via-ssh", "laptop", "far", "hi")
    assert sent.returncode == 2 and "--via-ssh is for a zcoder send that ssh runs" in sent.stderr
    forged = sides.zcoder("send", "--via-ssh", "api (pid 1)", "far", "hi", SSH_CONNECTION="1 2 3 4")
    assert forged.returncode == 2 and "takes a machine's name as a label" in forged.stderr


def test_an_older_zcoder_there_is_named_as_such(sides: Sides) -> None:
    old = sides.root / "old-zcoder"
    old.write_text(
        "#!/bin/sh\necho 'zcoder send: error: unrecognized arguments: --via-ssh laptop' >&2\n"
        "exit 2\n"
    )
    old.chmod(0o755)
    sent = sides.zcoder("send", f"{sides.host}:far", "hi", ZCODER_REMOTE_ZCODER=str(old))
    assert sent.returncode == EXIT_HOST_FAILED
    assert "is too old to take messages from other machines" in sent.stderr
