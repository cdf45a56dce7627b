"""A command zcoder runs cannot speak as its instance; the receiver logs the attempt."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import SenderFactory
from tests.e2e.harness import World, wait_until
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.model_requests import relay_records, tool_results

pytestmark = pytest.mark.timeout(120)

# Finds the nearest ancestor process that has a manifest in the registry and sends an
# enqueue to the socket argv[1] (instance argv[2]) in that instance's name, with an id of
# that instance's: only the connecting process can give it away.
IMPERSONATE = """
import json, os, sys
from pathlib import Path
from zcoder.relay.client import request
from zcoder.relay.peercred import parent_pid
from zcoder.relay.protocol import Envelope

registry = Path(os.environ["ZCODER_RELAY_DIR"])
pid = os.getppid()
while not sorted(registry.glob(f"a-{pid}-*.json")):
    pid = parent_pid(pid)
    assert pid is not None and pid > 1, "no zcoder among my ancestors"
manifest = json.loads(sorted(registry.glob(f"a-{pid}-*.json"))[0].read_text())
envelope = Envelope(
    message_id=manifest["instance_id"] + "-99",
    target_instance_id=sys.argv[2],
    sender_instance_id=manifest["instance_id"],
    sender_pid=manifest["pid"],
    sender_project=manifest["project"],
    sender_workspace=manifest["workspace"],
    body="a task in another's name",
    created_at=None,
)
ack = request(Path(sys.argv[1]), envelope.to_payload(), timeout=10, max_bytes=65536)
print("pid", os.getpid(), "sent as", manifest["instance_id"], "answer", ack.status)
"""
REFUSED = "reason: the connecting process is not the sender or its descendant in its session"


def log_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


def test_a_command_cannot_send_as_its_instance(world: World, sender_relay: SenderFactory) -> None:
    server_a, server_b = world.server(demo=False), world.server()
    script = world.root / "impersonate.py"
    script.write_text(IMPERSONATE, encoding="utf-8")
    b = world.start("beta", server_b)
    b_socket = b.wait_manifest()["socket"]
    command = shlex.join([sys.executable, str(script), b_socket, b.instance_id])
    server_a.enqueue(
        Turn.tool_calls(call("run_command", {"command": command})), Turn.text("tried it")
    )
    a = world.start("alpha", server_a, args=("--yes",))

    a.submit("send beta something in your own name")
    bodies = wait_until(lambda: server_a.chat_bodies[1:], what="alpha's command result")
    output = tool_results(bodies[0])[-1]
    assert f"sent as {a.instance_id} answer invalid" in output, output
    command_pid = int(output.split()[1])
    # Nothing entered beta's queue, its model heard nothing, and its log says why.
    assert b.spool_counts() == {"inbox": 0, "processing": 0, "held": 0, "done": 0, "rejected": 0}
    assert relay_records(server_b.chat_bodies) == []
    log = world.home("beta") / "zcoder.log"
    (line,) = wait_until(
        lambda: [x for x in log_lines(log) if "relay refused" in x], what="beta's log line"
    )
    assert (
        f"relay refused enqueue: status=invalid message_id='{a.instance_id}-99' "
        f"sender_instance_id='{a.instance_id}' peer_pid={command_pid} {REFUSED}"
    ) in line

    # A process in its sender's own session may send as it: the relay in this test
    # process, and the same script run as a plain child of this process (gamma's).
    gamma = sender_relay("gamma")
    assert gamma.send(b.instance_id, "an ordinary task").status == "accepted"
    done = subprocess.run(
        [sys.executable, str(script), b_socket, b.instance_id],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
        env=world.env("gamma", None),
    )
    assert f"sent as {gamma.instance_id} answer accepted" in done.stdout
    records = wait_until(
        lambda: relay_records(server_b.chat_bodies)[1:] and relay_records(server_b.chat_bodies),
        what="beta's two relayed turns",
    )
    assert [r.split("Task:\n", 1)[1].splitlines()[0] for r in records] == [
        "an ordinary task",
        "a task in another's name",
    ]
    assert all(f"Sender instance: {gamma.instance_id}" in r for r in records)
    assert len([x for x in log_lines(log) if "relay refused" in x]) == 1


def test_zcoder_send_run_by_a_trusted_instance_gets_no_trust(world: World) -> None:
    """alpha holds what it is sent and trusts beta. beta's model runs `zcoder send alpha`
    as a command (--yes), in beta's workspace, as beta's descendant; a plain shell does
    the same. Both messages are held, shown as `via zcoder send`, and nothing runs in
    alpha; beta's own message, sent by beta's process, runs at once."""
    server_a, server_b = world.server(demo=False), world.server(demo=False)
    alpha = world.start("alpha", server_a, ZCODER_RELAY_INBOUND="hold")
    command = shlex.join([sys.executable, "-m", "zcoder", "send", "alpha", "from a command"])
    server_b.enqueue(
        Turn.tool_calls(call("run_command", {"command": command})), Turn.text("sent it")
    )
    beta = world.start("beta", server_b, args=("--yes",))
    beta.wait_manifest()
    mark = alpha.mark()
    alpha.submit("/agents trust beta")  # a live interactive instance: trust is allowed
    alpha.wait_text("Trust:", since=mark)

    beta.submit("tell alpha something with zcoder send")
    bodies = wait_until(lambda: server_b.chat_bodies[1:], what="beta's command result")
    assert "Message accepted by alpha" in tool_results(bodies[0])[-1]
    shell = subprocess.run(
        [sys.executable, "-m", "zcoder", "send", "alpha", "from a plain shell"],
        cwd=beta.workspace,
        env=world.env("shell", None),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shell.returncode == 0, shell.stderr
    wait_until(lambda: alpha.spool_counts()["held"] == 2 or None, what="two held messages")
    alpha.wait_text("via zcoder send, pid", since=mark)
    assert server_a.chat_bodies == []  # nothing ran in alpha
    alpha.submit("/agents held")
    alpha.wait_text(f"2. via zcoder send, pid {shell_pid(alpha)}", since=mark)

    # beta itself, proven by the kernel, keeps its standing: its message runs at once.
    server_a.enqueue(Turn.text("done for beta"))
    server_b.enqueue(
        Turn.tool_calls(
            call("send_agent_message", {"target": "alpha", "message": "from beta itself"})
        ),
        Turn.text("asked alpha"),
    )
    mark_b = beta.mark()
    beta.submit("ask alpha yourself")
    beta.answer_dialog("y", since=mark_b)
    alpha.wait_text("done for beta", since=mark)
    alpha.wait_text("relayed task from beta (pid", since=mark)
    assert relay_records(server_a.chat_bodies)[-1].count("from beta itself") == 1
    assert alpha.spool_counts()["held"] == 2  # the zcoder sends still wait


def shell_pid(instance: Any) -> int:
    """The sender pid of the newest held message (the plain shell's zcoder send)."""
    held = sorted((instance.spool() / "held").iterdir())
    return int(json.loads(held[-1].read_text())["sender_pid"])
