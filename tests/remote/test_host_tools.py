"""The model's relay tools and the hosts the user listed (relay.hosts), against a real sshd.

``list_agents`` and ``send_agent_message`` are dispatched through the real tool registry
of a relay registered here; the far side's receiver is a relay in the far registry
(tests/fixtures/far_side.py). A host the user did not list is never asked; a send to a
listed one is confirmed by the user, with the host named, before ssh runs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_relay_tools import _ctx
from tests.fixtures.far_side import Sides, private_dir, sides
from tests.fixtures.sshd import available
from zcoder.agent.relay_tools import LIST_AGENTS, SEND_AGENT_MESSAGE, register_relay_tools
from zcoder.relay import (
    ClaimedMessage,
    ListedHosts,
    Peer,
    Relay,
    listed_hosts,
    load_relay_settings,
    peer_label,
)
from zcoder.relay.host_wait import stop_all
from zcoder.relay.hosts import this_host_label
from zcoder.tools import (
    ToolRegistry,
    TurnOrigin,
)

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(available() is not None, reason=str(available())),
]
__all__ = ["sides"]  # the fixture (tests.fixtures.far_side)


class Confirmer:
    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.asked: list[Peer] = []

    async def confirm_send(self, peer: Peer, message: str, *, steer: bool = False) -> bool:
        self.asked.append(peer)
        return self.answer


def _write_hosts(home: Path, hosts: Any) -> ListedHosts:
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"relay": {"hosts": hosts}}))
    return listed_hosts(home)


@pytest.fixture
def me(sides: Sides, monkeypatch: pytest.MonkeyPatch) -> Iterator[Relay]:
    """This machine's zcoder (its relay), with ssh's settings in its environment."""
    for key in ("ZCODER_SSH", "ZCODER_REMOTE_ZCODER"):
        monkeypatch.setenv(key, sides.here[key])
    private_dir(Path(sides.here["ZCODER_RELAY_DIR"]))
    workspace = sides.root / "me"
    workspace.mkdir()
    relay = Relay(
        load_relay_settings(sides.here), workspace=workspace, env=sides.here, interactive=True
    )
    assert relay.start().available
    yield relay
    relay.stop()


def _tools(
    me: Relay, hosts: ListedHosts | None, answer: bool = True
) -> tuple[ToolRegistry, Confirmer]:
    registry = ToolRegistry()
    confirmer = Confirmer(answer)
    register_relay_tools(registry, me, confirmer, hosts)
    return registry, confirmer


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_schemas_are_unchanged_without_listed_hosts(sides: Sides, me: Relay) -> None:
    plain = _tools(me, None)[0].schemas(_ctx(sides.root))
    assert _tools(me, ListedHosts())[0].schemas(_ctx(sides.root)) == plain
    listed = _write_hosts(sides.root / "home", [sides.host])
    with_hosts = _tools(me, listed)[0].schemas(_ctx(sides.root))
    assert with_hosts != plain
    [send] = [s for s in with_hosts if s["function"]["name"] == SEND_AGENT_MESSAGE]
    target = send["function"]["parameters"]["properties"]["target_instance_id"]
    assert "HOST:NAME" in target["description"]


async def test_list_agents_gives_each_listed_hosts_agents_with_their_host(
    sides: Sides, me: Relay
) -> None:
    receiver = sides.receiver()
    try:
        unreachable = f"127.0.0.1:{_closed_port()}"
        listed = _write_hosts(sides.root / "home", [sides.host, unreachable, "-oBad", 7])
        assert len(listed.targets) == 2 and len(listed.problems) == 2
        registry, _ = _tools(me, listed)
        result = await registry.dispatch(LIST_AGENTS, {}, _ctx(sides.root))
    finally:
        receiver.stop()
    assert f"On {sides.host}, over SSH (send to {sides.host}:NAME):" in result.output
    assert f"far — pid {os.getpid()}, ready, id {receiver.instance_id}" in result.output
    assert f"On {unreachable}: not available (" in result.output
    assert "could not be reached" in result.output


async def test_a_send_to_a_listed_host_is_confirmed_with_its_host_and_delivered_there(
    sides: Sides, me: Relay
) -> None:
    receiver = sides.receiver()
    try:
        registry, confirmer = _tools(me, _write_hosts(sides.root / "home", [sides.host]))
        arguments = {"target_instance_id": f"{sides.host}:far", "message": "$(touch x) run it"}
        result = await registry.dispatch(SEND_AGENT_MESSAGE, arguments, _ctx(sides.root))
        claimed = receiver.claim_one()
    finally:
        receiver.stop()
        stop_all()
    assert result.ok, result.output
    assert result.output.startswith(f"Message accepted by far ({receiver.instance_id})")
    assert "its receipt comes back here over SSH" in result.output
    assert result.metadata["target"] == f"{sides.host}:{receiver.instance_id}"
    [peer] = confirmer.asked
    assert peer.instance_id == receiver.instance_id and peer.host == sides.host
    assert peer_label(peer) == f"far on {sides.host}"  # the dialog says the host
    assert isinstance(claimed, ClaimedMessage)
    assert claimed.envelope.body == "$(touch x) run it"
    assert claimed.envelope.sender_kind == "send"
    assert claimed.envelope.sender_project == f"SSH from {this_host_label()}"


async def _until(check: Any, what: str) -> Any:
    import asyncio

    for _ in range(1500):  # 30 s: an ssh round trip on a loaded machine
        if found := check():
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"{what} never came")


async def test_the_progress_and_receipt_of_a_send_there_come_back_here_as_a_peers_do(
    sides: Sides, me: Relay
) -> None:
    sent: list[Any] = []
    me.on_sent = lambda result, body: sent.append((result, body))
    receiver = sides.receiver()
    try:
        registry, _ = _tools(me, _write_hosts(sides.root / "home", [sides.host]))
        arguments = {"target_instance_id": f"{sides.host}:far", "message": "run the tests"}
        result = await registry.dispatch(SEND_AGENT_MESSAGE, arguments, _ctx(sides.root))
        assert result.ok, result.output
        claimed = await _until(receiver.claim_one, "the message")
        assert receiver.send_progress(claimed.envelope, "started") == "accepted"
        [(progress, about)] = await _until(me.take_progress, "the progress")
        assert progress.stage == "started"
        assert about.target_label == f"{sides.host}:far"
        summary = "12 passed \x1b]52;c;cm0gLXJmIH4=\x07" + "x" * 3000
        assert receiver.send_receipt(claimed.envelope, "completed", summary) == "accepted"
        [(receipt, answered)] = await _until(me.take_receipts, "the receipt")
    finally:
        receiver.stop()
        stop_all()
    assert receipt.outcome == "completed" and receipt.in_reply_to == result.metadata["message_id"]
    assert receipt.summary.startswith("12 passed \x1b]52")  # kept whole: escaped where shown
    assert len(receipt.summary) <= 2000
    assert receipt.sender_instance_id == f"{sides.host}:{receiver.instance_id}"
    assert answered.message_id == result.metadata["message_id"]
    # The history recorded the send (/inbox), as a local peer's.
    [(recorded, body)] = sent
    assert recorded.message_id == result.metadata["message_id"] and body == "run the tests"
    # Nobody here can answer for that message: a local instance id has no colon.
    assert me.receipts.accept(
        dataclasses.replace(receipt, message_id=receipt.message_id + "x")
    )[0] == "invalid"  # fmt: skip


RECEIVER = """
import sys, time
from pathlib import Path
from zcoder.relay import Relay, load_relay_settings
import os
workspace = Path(sys.argv[1])
workspace.mkdir()
relay = Relay(load_relay_settings(os.environ), workspace=workspace, env=dict(os.environ),
              name="gone", interactive=True)
assert relay.start().available
print(relay.instance_id, flush=True)
time.sleep(600)
"""


async def test_a_receiver_there_killed_before_running_it_gives_a_discarded_receipt(
    sides: Sides, me: Relay
) -> None:
    import subprocess
    import sys

    there = subprocess.Popen(
        [sys.executable, "-c", RECEIVER, str(sides.root / "gone")],
        env=sides.there, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert there.stdout is not None and there.stdout.readline().strip()
        registry, _ = _tools(me, _write_hosts(sides.root / "home", [sides.host]))
        arguments = {"target_instance_id": f"{sides.host}:gone", "message": "never run"}
        result = await registry.dispatch(SEND_AGENT_MESSAGE, arguments, _ctx(sides.root))
        assert result.ok, result.output
        there.kill()  # gone without a receipt: the zcoder send there says so
        there.wait()
        [(receipt, _)] = await _until(me.take_receipts, "the discarded receipt")
    finally:
        there.kill()
        there.wait()
        stop_all()
    assert receipt.outcome == "discarded" and "quit without running it" in receipt.summary


@pytest.mark.parametrize(
    ("listed", "target", "said"),
    [
        ([], "zcoder-test-host:far", "needs it in relay.hosts"),
        (["elsewhere"], "zcoder-test-host:far", "zcoder-test-host is not in relay.hosts"),
        (["zcoder-test-host"], "zcoder-test-host:nobody", "on zcoder-test-host"),
        (["zcoder-test-host"], "zcoder-test-host:-far", "is not [user@]host[:port]:NAME"),
        (["zcoder-test-host"], "-oProxyCommand=x:far", "HOST:NAME takes [user@]host[:port]"),
    ],
)
async def test_what_is_not_a_listed_hosts_agent_is_refused_unasked(
    sides: Sides, me: Relay, listed: list[str], target: str, said: str
) -> None:
    receiver = sides.receiver()
    try:
        registry, confirmer = _tools(me, _write_hosts(sides.root / "home", listed))
        arguments = {"target_instance_id": target, "message": "hello"}
        result = await registry.dispatch(SEND_AGENT_MESSAGE, arguments, _ctx(sides.root))
        assert receiver.claim_one() is None
    finally:
        receiver.stop()
    assert not result.ok and said in result.output, result.output
    assert confirmer.asked == []


async def test_a_declined_send_and_a_relayed_turns_send_deliver_nothing(
    sides: Sides, me: Relay
) -> None:
    receiver = sides.receiver()
    try:
        listed = _write_hosts(sides.root / "home", [sides.host])
        registry, confirmer = _tools(me, listed, answer=False)
        arguments = {"target_instance_id": f"{sides.host}:far", "message": "hello"}
        declined = await registry.dispatch(SEND_AGENT_MESSAGE, arguments, _ctx(sides.root))
        assert len(confirmer.asked) == 1 and "the user declined" in declined.output
        relayed_ctx = _ctx(sides.root, TurnOrigin.RELAY, relay_sender="1-2")
        relayed = await registry.dispatch(SEND_AGENT_MESSAGE, arguments, relayed_ctx)
        assert "you may reply only to its sender" in relayed.output
        assert receiver.claim_one() is None
    finally:
        receiver.stop()
    assert len(confirmer.asked) == 1


def test_listed_hosts_reads_the_settings_file(tmp_path: Path) -> None:
    assert listed_hosts(tmp_path) == ListedHosts()  # no file: no hosts
    found = _write_hosts(tmp_path, ["me@gpu:2222", "gpu", "me@gpu:2222", "[::1]", "a;b"])
    assert [t.label for t in found.targets] == ["me@gpu:2222", "gpu", "[::1]"]
    [problem] = found.problems
    assert "relay.hosts takes [user@]host[:port]" in problem and "left out" in problem
    (tmp_path / "settings.json").write_text(json.dumps({"relay": {"hosts": "gpu"}}))
    assert listed_hosts(tmp_path).problems[0].endswith("relay.hosts must be a list of hosts")
    assert os.environ.get("ZCODER_RELAY_HOSTS") is None  # the file is the only source


def test_the_wait_reads_zcoder_sends_own_exit_status_for_a_receiver_gone() -> None:
    from zcoder.relay import host_wait, scripts

    assert host_wait.EXIT_DISCARDED == scripts.EXIT_DISCARDED
