"""``zcoder --connect`` end to end: the TUI in tmux here, the agent behind a real sshd.

The "remote host" is this machine reached through an OpenSSH server of the test's own
(tests/fixtures/sshd.py) on 127.0.0.1, with its own keys and configuration; ssh runs this
checkout's ``python -m zcoder --acp`` there (ZCODER_REMOTE_COMMAND), against the fake
Ollama, in a workspace, home and relay registry that are the remote side's alone. So a
file the command writes in that workspace, with sshd's ``SSH_CONNECTION`` in it, proves
that it ran on the far side of the connection; the remote registry holds the only peers
``/list-agents`` may show; the local registry must stay empty (the seed's rule).
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import SRC, World, wait_until
from tests.e2e.tmux import TmuxInstance, start_in_tmux
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.sshd import SshServer, available, ssh_server
from zcoder.relay import Relay, load_relay_settings
from zcoder.sessions import SessionStore

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(available() is not None, reason=str(available())),
]


@pytest.fixture
def sshd() -> Iterator[SshServer]:
    with ssh_server() as server:
        yield server
        if os.environ.get("ZCODER_E2E_KEEP"):
            print(server.log_text(), file=sys.stderr)


class Remote:
    """The remote side: its workspace, home, relay registry and the command ssh runs."""

    def __init__(self, world: World, server: FakeOllama) -> None:
        self.workspace = world.workspace("far/app")
        self.home = world.root / "far-home"
        self.registry = world.root / "far-registry"
        self.registry.mkdir(mode=0o700)
        runtime = world.root / "far-runtime"
        runtime.mkdir(mode=0o700)
        env = {
            "ZCODER_HOME": str(self.home),
            "ZCODER_RELAY_DIR": str(self.registry),
            "XDG_RUNTIME_DIR": str(runtime),
            "TMPDIR": str(runtime),
            "PYTHONPATH": str(SRC),
            "PYTHONUTF8": "1",
            "OLLAMA_HOST": server.url,
            "ZCODER_MODEL": "qwen3-coder",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }
        assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        self.command = f"env {assignments} {shlex.quote(sys.executable)} -m zcoder --acp"

    def sessions(self) -> list[str]:
        with SessionStore(self.home) as store:
            return [info.id for info in store.list_sessions(self.workspace, "coding")]

    def tool_events(self, session_id: str) -> list[tuple[str, str]]:
        with SessionStore(self.home) as store:
            data = store.load(session_id, self.workspace, "coding")
        return [(e.text, str(e.metadata.get("status"))) for e in data.events if e.role == "tool"]


def wait_said(tui: TmuxInstance, words: str, *, timeout: float = 15.0) -> None:
    """Until ``words`` are on the screen, wherever the transcript wrapped them."""

    def said() -> bool:
        rows = [row.strip(" │█▊▎") for row in tui.screen()]
        return words in " ".join(" ".join(rows).split())

    try:
        wait_until(said, timeout=timeout, what=repr(words))
    except TimeoutError as exc:
        raise AssertionError(f"{exc}; the screen:\n{tui.screen_text}") from None


def connect(world: World, sshd: SshServer, remote: Remote) -> TmuxInstance:
    tui = start_in_tmux(
        world,
        "here",
        None,
        args=("--connect", f"{sshd.alias}{remote.workspace}"),
        wait=False,
        ZCODER_SSH=sshd.ssh_command,
        ZCODER_REMOTE_COMMAND=remote.command,
    )
    tui.wait_text("Connected to", timeout=60)
    tui.wait_text("relay: on")
    return tui


def test_a_turn_runs_there_and_its_approval_is_answered_here(world: World, sshd: SshServer) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    proof = remote.workspace / "proof.txt"
    server.enqueue(
        Turn.tool_calls(
            call("run_command", {"command": 'echo "ran over $SSH_CONNECTION" > proof.txt'})
        ),
        Turn.text("All done on the far side."),
    )
    tui = connect(world, sshd, remote)
    assert f"ssh:{sshd.alias}" in tui.screen_text  # the header names the remote host
    tui.wait_gone("f5 Reconnect")  # offered in the footer only while disconnected
    # No sidebar of local sessions: they are the remote host's.
    [row] = [r for r in tui.screen() if "Connected to" in r]
    assert row.index("Connected to") < 5
    tui.submit("write the proof")
    tui.wait_text("Run this command?")
    tui.wait_text("[n]/Esc deny")
    assert not proof.exists()  # nothing runs before the answer given here
    tui.send_key("y")
    tui.wait_text("All done on the far side.")
    assert proof.read_text().startswith("ran over 127.0.0.1 ")
    assert not (world.workspace("here") / "proof.txt").exists()
    [session] = remote.sessions()
    assert remote.tool_events(session)[0][1] == "completed"
    tui.submit("/help")
    wait_said(tui, "/reconnect (F5) connects")
    assert tui.quit() == 0

    # Later: --resume loads the session saved there, its approved command included.
    again = start_in_tmux(
        world,
        "here",
        None,
        args=("--connect", f"{sshd.alias}{remote.workspace}", "--resume", session),
        wait=False,
        ZCODER_SSH=sshd.ssh_command,
        ZCODER_REMOTE_COMMAND=remote.command,
    )
    wait_said(again, "over SSH: session", timeout=60)
    again.wait_text("All done on the far side.")
    wait_said(again, "ran over $SSH_CONNECTION")
    assert remote.sessions() == [session]


def test_discovery_is_the_remote_hosts_and_nothing_is_published_here(
    world: World, sshd: SshServer
) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    env = world.env("far-peer", None, ZCODER_RELAY_DIR=str(remote.registry))
    peer = Relay(
        load_relay_settings(env),
        workspace=world.workspace("far-peer"),
        env=env,
        name="far-peer",
        interactive=True,
    )
    assert peer.start().available
    try:
        tui = connect(world, sshd, remote)
        tui.submit("/list-agents")
        wait_said(tui, "discovery is on the remote host")
        tui.wait_text("far-peer")
        tui.submit("/agents")
        wait_said(tui, "/agents: this zcoder is connected to")
        tui.submit("/model")
        wait_said(tui, "/model is not available over --connect")
        tui.submit("!touch here.txt")  # would run here, not in the remote workspace
        wait_said(tui, "nothing was run")
        assert not (world.workspace("here") / "here.txt").exists()
        assert not (remote.workspace / "here.txt").exists()
        tui.submit("/new")  # session/new there
        tui.wait_text("New session")
        assert len(remote.sessions()) == 2
        # The local registry (ZCODER_RELAY_DIR of the TUI) holds nothing: no peer here.
        assert list(world.registry.iterdir()) == []
    finally:
        peer.stop()


def _started(path: Path) -> bool:
    return path.exists() and path.read_text().strip() != ""


@pytest.mark.parametrize("cut", ["ssh client", "sshd child"])
def test_a_dropped_connection_keeps_the_transcript_and_reconnects_without_running_again(
    world: World, sshd: SshServer, cut: str
) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    started, finished = remote.workspace / "started.txt", remote.workspace / "finished.txt"
    server.enqueue(
        Turn.text("First answer, kept."),
        Turn.tool_calls(
            call(
                "run_command",
                {"command": "echo once >> started.txt; sleep 60; echo late > finished.txt"},
            )
        ),
        Turn.text("Back after the reconnect."),
    )
    tui = connect(world, sshd, remote)
    tui.submit("say something")
    tui.wait_text("First answer, kept.")
    tui.submit("run the long one")
    tui.wait_text("[n]/Esc deny")
    tui.send_key("y")
    wait_until(lambda: _started(started), what="the command to start on the remote side")
    requests = len(server.chat_bodies)

    if cut == "ssh client":
        pids = [pid for pid in _children(tui.pid) if _name(pid) == "ssh"]
    else:
        pids = sshd.connection_pids()
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGKILL)

    wait_said(tui, "was lost during this turn")
    wait_said(tui, "was running there")
    tui.wait_text("First answer, kept.")  # the transcript stays
    tui.wait_text("Disconnected")
    tui.wait_text("f5 Reconnect")

    tui.submit("/reconnect")
    tui.wait_text("Reconnected to", timeout=60)
    wait_said(tui, "Interrupted when the connection was lost")
    tui.wait_text("First answer, kept.")  # the loaded session shows it again
    [session] = remote.sessions()
    [(_, status)] = remote.tool_events(session)
    assert status == "interrupted"
    assert started.read_text() == "once\n"  # ran once, not again
    assert not finished.exists()  # interrupted: it never got that far
    assert len(server.chat_bodies) == requests  # nothing was sent again

    tui.submit("are you back?")
    tui.wait_text("Back after the reconnect.")
    assert started.read_text() == "once\n"


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid``."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = Path(f"/proc/{parent}/task").iterdir()
            kids = [int(k) for t in tasks for k in (t / "children").read_text().split()]
        except OSError:
            continue
        found += kids
        todo += kids
    return found


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_escape_stops_the_remote_turn_and_its_command(world: World, sshd: SshServer) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    started, finished = remote.workspace / "started.txt", remote.workspace / "finished.txt"
    server.enqueue(
        Turn.tool_calls(
            call(
                "run_command",
                {"command": "echo once >> started.txt; sleep 60; echo x > finished.txt"},
            )
        ),
        Turn.text("Still here after the stop."),
    )
    tui = connect(world, sshd, remote)
    tui.submit("run the long one")
    tui.wait_text("[n]/Esc deny")
    tui.send_key("y")
    wait_until(lambda: _started(started), what="the command to start on the remote side")
    tui.send_key("\x1b")  # Escape: session/cancel
    tui.wait_text("Stopped")
    [session] = remote.sessions()
    wait_until(lambda: remote.tool_events(session), what="the remote to save the stopped call")
    assert remote.tool_events(session)[0][1] == "interrupted"
    tui.submit("still there?")
    tui.wait_text("Still here after the stop.")
    assert started.read_text() == "once\n"
    assert not finished.exists()


def test_a_remote_command_that_cannot_start_is_said(world: World, sshd: SshServer) -> None:
    tui = start_in_tmux(
        world,
        "here",
        None,
        args=("--connect", sshd.alias),
        wait=False,
        ZCODER_SSH=sshd.ssh_command,
        ZCODER_REMOTE_COMMAND="/nonexistent/zcoder --acp",
    )
    wait_said(tui, "could not connect to", timeout=60)
    wait_said(tui, ": /nonexistent/zcoder")  # what the remote shell said of it
    tui.wait_text("Disconnected")
    assert list(world.registry.iterdir()) == []


def test_sessions_lists_the_remote_hosts_and_opens_one_here(world: World, sshd: SshServer) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    server.enqueue(Turn.text("Reply to the parser task."), Turn.text("Reply to the docs task."))
    tui = connect(world, sshd, remote)
    tui.submit("fix the parser")
    tui.wait_text("Reply to the parser task.")
    [first] = remote.sessions()
    tui.submit("/new")
    tui.wait_text("New session")
    tui.submit("write the docs")
    tui.wait_text("Reply to the docs task.")
    [second] = [s for s in remote.sessions() if s != first]
    assert first not in tui.screen_text  # the list is hidden at start, and not asked for
    tui.send_key("\x02")  # Ctrl+B: shown, it asks the remote host
    tui.wait_text(first)
    tui.send_key("\x02")
    tui.wait_gone(first)
    tui.submit("/sessions")
    wait_said(tui, f"Sessions of {remote.workspace} on")
    wait_said(tui, "fix the parser")
    wait_said(tui, "2 messages")
    # The prompt keeps the focus, as in a local run (issue 27): /sessions ID opens the
    # older one, loaded as saved there.
    tui.submit(f"/sessions {first}")
    wait_said(tui, f"Session {first} loaded")
    tui.wait_text("Reply to the parser task.")
    tui.wait_gone("Reply to the docs task.")
    assert "Ready" in tui.screen()[0]
    # A unique prefix of the id opens one too.
    tui.type_text(f"/sessions {second[:-2]}")
    tui.wait_text(f"▊ /sessions {second[:-2]}")
    tui.send_key("\r")
    wait_said(tui, f"Session {second} loaded")
    tui.wait_text("Reply to the docs task.")
    tui.wait_gone("Reply to the parser task.")
    tui.submit("/sessions nosuchsession")
    wait_said(tui, "no session of")
    assert tui.quit() == 0
