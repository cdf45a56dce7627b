"""Issue 29's second "Done when", as a user lives it: two real zcoders in tmux (alpha,
beta), each with its own fake model; keys are the bytes a terminal sends.

beta's user trusts alpha by typing ``/agents trust alpha``. beta's turn runs a command
that waits for a file the test makes (a gate), so "while beta's turn runs" is arranged,
never timed. alpha's model asks to steer that turn; the steer lands right after the
command's result, is shown as steering, and a command it asks for is asked in beta's
dialog naming alpha although beta runs with ``--yes``. alpha hears ``steered``, then the
receipt. The same steer from ``zcoder send`` in a shell (send standing, even run in the
workspace beta trusts) is queued and runs later as a turn of its own; ``--wait`` prints
``started`` before the receipt and exits with the outcome's code (docs/relay.md).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import DIALOG_ARMED, World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, start_in_tmux
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.model_requests import relay_records
from tests.relay.conftest import zcoder
from zcoder.relay.scripts import RECEIPT_CODES

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SIZE = (140, 40)
STEER = "also write steered.txt when you are done"
ESCAPE = "1b"


def gated(n: int, *, id: str = "") -> Turn:
    """A command that runs until the file ``gate-N`` exists in the workspace."""
    command = f"while [ ! -e gate-{n} ]; do sleep 0.05; done; echo passed {n}"
    return Turn.tool_calls(call("run_command", {"command": command}, id=id or f"g{n}"))


def open_gate(workspace: Path, n: int) -> None:
    (workspace / f"gate-{n}").touch()


def typed(zc: TmuxInstance, text: str) -> None:
    """``text`` typed (one burst of key bytes, not a paste), seen in the prompt, then
    Enter as the raw CR a terminal sends."""
    zc.type_text(text)
    zc.wait_text(text)
    zc.send_hex(ENTER)


def requests(server: FakeOllama, count: int) -> list[dict[str, Any]]:
    return wait_until(
        lambda: server.chat_bodies if len(server.chat_bodies) >= count else None,
        what=f"{count} model requests",
    )


def answer(zc: TmuxInstance, key: str) -> None:
    zc.wait_text(DIALOG_ARMED)
    zc.send_hex(key.encode().hex())


def agents_row(world: World, name: str) -> str:
    """``zcoder agents`` from a shell: the row of ``name``."""
    listed = zcoder(world.env("shell", None), "agents")
    assert listed.returncode == 0, listed.stderr
    return next((row for row in listed.stdout.splitlines() if row.startswith(name)), "")


class Send:
    """``zcoder send ...`` run from a shell in ``cwd``; its lines of output as they come."""

    def __init__(self, world: World, cwd: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "zcoder", "send", *args],
            cwd=cwd,
            env=world.env("shell", None),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_line(self, count: int) -> list[str]:
        return wait_until(
            lambda: list(self.lines) if len(self.lines) >= count else None,
            timeout=30,
            what=f"{count} lines from zcoder send (so far {self.lines})",
        )

    def finish(self) -> tuple[int, list[str], str]:
        code = self.process.wait(timeout=60)
        self._reader.join(timeout=5)
        assert self.process.stderr is not None
        return code, self.lines, self.process.stderr.read()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def test_a_trusted_peers_steer_lands_and_the_same_steer_from_zcoder_send_is_queued(
    world: World,
) -> None:
    server_a, server_b = world.server(demo=False), world.server(demo=False)
    beta = start_in_tmux(world, "beta", server_b, args=("--yes",), size=SIZE)
    alpha = start_in_tmux(world, "alpha", server_a, size=SIZE)
    beta_id = beta.instance_id

    # beta's user trusts alpha, as a user types it.
    typed(beta, "/agents trust alpha")
    beta.wait_text(f"Trust: {alpha.workspace}")

    # beta's turn: a gated command (--yes runs it unasked); then, once alpha's steer has
    # landed, the command the steer asks for; then its answer.
    server_b.enqueue(
        gated(1),
        Turn.tool_calls(call("run_command", {"command": "touch steered.txt"}, id="s1")),
        Turn.text("beta finished both"),
    )
    typed(beta, "run the long step")
    requests(server_b, 1)
    beta.wait_state("busy")
    wait_until(
        lambda: "running a command" in agents_row(world, "beta"),
        what="`zcoder agents` to show beta running a command",
    )

    # alpha's model steers beta's running turn; alpha's user confirms the send.
    server_a.enqueue(
        Turn.tool_calls(
            call(
                "send_agent_message",
                {"target": beta_id, "message": STEER, "delivery": "steer"},
                id="m1",
            )
        ),
        Turn.text("asked beta"),
    )
    typed(alpha, "steer beta")
    alpha.wait_text("Send this message to another zcoder agent?")
    # The user confirming it is told it asks to steer, and when it is queued instead.
    alpha.wait_text("Steering: it joins beta's running turn at its next safe point, if beta")
    answer(alpha, "y")
    second = requests(server_a, 2)[1]["messages"]
    assert second[-1]["role"] == "tool"
    assert (
        "steered: it reaches beta's running turn at its next safe point" in (second[-1]["content"])
    )
    alpha.wait_text("asked beta")
    assert len(server_b.chat_bodies) == 1  # beta's command still runs: nothing was cut

    open_gate(beta.workspace, 1)
    after = requests(server_b, 2)[1]["messages"]
    # Right after the command's result, the relayed text, wrapped as every relayed task.
    assert after[-2]["role"] == "tool" and "passed 1" in after[-2]["content"]
    assert after[-1]["role"] == "user"
    (record,) = relay_records([server_b.chat_bodies[1]])
    assert record == after[-1]["content"]
    assert f"Sender: alpha (pid {alpha.pid})" in record and f"Task:\n{STEER}\n" in record
    beta.wait_text("⇄ ↪ steering relayed")  # shown where it landed, marked as steering

    # Attack: beta runs with --yes, but the steered turn's command asks, naming alpha.
    beta.wait_text("Run this command? — asked by a task relayed from alpha")
    assert not (beta.workspace / "steered.txt").exists()
    alpha.wait_text("beta took it into its running turn")  # progress, while beta's turn still runs
    assert "receipt" not in alpha.screen_text.split("beta took it into its running turn", 1)[1]
    answer(beta, "y")
    wait_until((beta.workspace / "steered.txt").exists, what="the approved command")
    beta.wait_text("beta finished both")

    # alpha: `steered` first, then the receipt of the turn it landed in (no turn of alpha's).
    alpha.wait_text("receipt beta completed: beta finished both")
    screen = alpha.screen_text
    assert screen.index("beta took it into its running turn") < screen.index(
        "receipt beta completed: beta finished both"
    )
    assert len(server_a.chat_bodies) == 2
    typed(alpha, "/inbox")
    alpha.wait_text(f"→ beta · steered · receipt: completed · {STEER}")
    beta.wait_state("ready")
    assert len(server_b.chat_bodies) == 3  # the steer ran inside that turn, not after it
    # alpha's model was given both, in that order, as records (no turn of their own).
    server_a.enqueue(Turn.text("noted"))
    typed(alpha, "what did beta do?")
    told = [
        m["content"]
        for m in requests(server_a, 3)[2]["messages"]
        if "<agent_receipt>" in m["content"]
    ]
    assert len(told) == 2, told
    assert "beta (instance" in told[0]
    assert "took the task you sent it into its running turn." in told[0]
    assert "Outcome: completed" in told[1] and "beta finished both" in told[1]

    # Now the same steer from `zcoder send`, run in the very workspace beta trusts: it is
    # a `zcoder send`, never an instance, so it is queued, and runs as a turn of its own.
    server_b.enqueue(
        gated(2),
        Turn.text("beta's own turn done"),
        Turn.text("the shell's steer ran"),
        Turn.text("the plain wait ran"),
    )
    typed(beta, "another long step")
    requests(server_b, 4)
    beta.wait_state("busy")
    steer = Send(world, alpha.workspace, "--steer", "--wait", "beta", STEER)
    plain: Send | None = None
    try:
        ack = steer.wait_line(1)[0]
        assert ack == (
            f"Message accepted by beta ({beta_id}); not steered (beta does not take steering "
            "from you): queued at position 1. Delivery does not imply task completion."
        )
        plain = Send(world, alpha.workspace, "--wait", "beta", "then say the plain wait ran")
        assert "queued at position 2." in plain.wait_line(1)[0]
        assert len(server_b.chat_bodies) == 4  # nothing reached the running turn
        open_gate(beta.workspace, 2)
        code, lines, err = steer.finish()
        assert code == RECEIPT_CODES["completed"] == 0, (lines, err)
        assert lines[1:] == ["started", "completed: the shell's steer ran"]
        code, lines, err = plain.finish()
        assert code == 0, (lines, err)
        assert lines[1:] == ["started", "completed: the plain wait ran"]
    finally:
        steer.kill()
        if plain is not None:
            plain.kill()
    bodies = server_b.chat_bodies
    last = bodies[4]["messages"][-1]  # after gate 2's result, nothing was added
    assert last["role"] == "tool" and "passed 2" in last["content"]
    assert relay_records([bodies[4]]) == []
    assert [r.split("Task:\n", 1)[1] for r in relay_records(bodies[5:7])] == [
        f"{STEER}\n</agent_relay>",
        "then say the plain wait ran\n</agent_relay>",
    ]
    assert (
        "Sender standing: not an interactive zcoder instance: sent with `zcoder send`"
        in (relay_records([bodies[5]])[0])
    )
    beta.wait_text("relayed task via zcoder send, pid")  # queued, then a turn of its own


def test_send_wait_exits_with_cancelled_when_beta_s_user_stops_the_task(world: World) -> None:
    server_b = world.server(demo=False)
    beta = start_in_tmux(world, "beta", server_b, args=("--yes",), size=SIZE)
    assert beta.instance_id  # registered
    server_b.enqueue(gated(1))
    shell = world.workspace("shell")
    sent = Send(world, shell, "--steer", "--wait", "beta", "run the long step")
    try:
        ack = sent.wait_line(1)[0]
        assert "not steered (beta runs no turn): queued at position" in ack
        assert sent.wait_line(2)[1] == "started"
        requests(server_b, 1)
        beta.wait_text("gate-1")  # the command runs
        beta.send_hex(ESCAPE)  # beta's user stops the relayed task
        code, lines, err = sent.finish()
    finally:
        sent.kill()
    assert code == RECEIPT_CODES["cancelled"], (lines, err)
    assert lines[2].startswith("cancelled: ")
