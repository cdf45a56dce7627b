"""The user's waiting input over ``zcoder --connect``: Enter's steering waits on the remote
host (``_zcoder/input`` there), Ctrl+G's follow-ups here; ``/queue`` and the strip above
the prompt show both, numbered once and marked where each waits, and ``/queue drop N`` and
``/queue resume`` act on each where it is. A session switched away from keeps its
follow-ups: they never run in another session.

The TUI in tmux, keys as the bytes a terminal sends (Enter 0x0d, Ctrl+G 0x07, Escape);
the agent behind a real sshd (tests/remote/test_connect.py has the setting). The remote's
command waits for a gate file, so the input is typed while the tool call runs, whatever
the load."""

from __future__ import annotations

import os
import signal

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.sshd import SshServer, available
from tests.remote.test_connect import Remote, _children, _name, connect, sshd, wait_said
from tests.remote.test_steer import GATED

__all__ = ["sshd"]  # the fixture, used by name

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(available() is not None, reason=str(available())),
]

CTRL_G = "07"
ESCAPE = "1b"
NUMBERED = set("①②③④⑤")


def send(tui: TmuxInstance, text: str, key: str) -> None:
    """Type ``text`` (typed keys, not a paste), see it in the prompt, then ``key``."""
    tui.type_text(text)
    tui.wait_text(text)
    tui.send_hex(key)


def strip(tui: TmuxInstance) -> list[str]:
    """The rows of the strip above the prompt that name waiting input (numbered ①…)."""
    rows = [row.strip(" │▎▊█") for row in tui.screen()]
    return [
        row for row in rows if row.startswith(("steering", "follow-up")) and NUMBERED & set(row)
    ]


def last_user(server: FakeOllama, n: int) -> object:
    return server.chat_bodies[n]["messages"][-1]


def start_gated_turn(tui: TmuxInstance) -> None:
    tui.submit("format the files")
    tui.wait_text("[n]/Esc deny")
    tui.send_key("y")
    tui.wait_gone("[n]/Esc deny")  # the prompt has the keys again
    wait_said(tui, "waiting")  # the command runs there, held by its gate


def test_queue_lists_and_drops_remote_steering_and_local_follow_ups(
    world: World, sshd: SshServer
) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": GATED}, id="c1")),
        Turn.tool_calls(call("run_command", {"command": GATED.replace("go ", "go2 ")}, id="c2")),
        Turn.text("Steered."),
        Turn.text("Docs written."),
    )
    remote.command += " --yes"  # no dialog: no answer here refreshes the strip by the way
    tui = connect(world, sshd, remote)
    host = sshd.alias
    tui.submit("format the files")
    wait_said(tui, "waiting")  # the command runs there, held by its gate
    send(tui, "use tabs", ENTER)
    wait_said(tui, "Steering sent to the turn running on")
    # Shown above the prompt while it waits there, not yet landed.
    tui.wait_text(f"steering, on {host} ① use tabs")
    send(tui, "drop this steer", ENTER)
    tui.wait_text(f"steering, on {host} ② drop this steer")
    send(tui, "then the docs", CTRL_G)
    tui.wait_text("follow-up ③ then the docs")
    send(tui, "not this one", CTRL_G)

    tui.submit("/queue")
    wait_said(tui, "Waiting (4):")
    wait_said(tui, f"1. steering, on {host}: use tabs")
    wait_said(tui, f"2. steering, on {host}: drop this steer")
    wait_said(tui, "3. follow-up: then the docs")
    wait_said(tui, "4. follow-up: not this one")
    tui.submit("/queue drop 4")  # here
    wait_said(tui, "Dropped follow-up 4: not this one")
    tui.submit("/queue drop 2")  # there
    wait_said(tui, f"Dropped steering, on {host} 2: drop this steer")
    tui.wait_gone("drop this steer ")
    assert strip(tui) == [f"steering, on {host} ① use tabs", "follow-up ② then the docs"]
    assert len(server.chat_bodies) == 1  # nothing ran yet: the command still waits

    (remote.workspace / "go").touch()
    # The steer landed; the turn goes on with a second command: it left the strip.
    wait_until(lambda: strip(tui) == ["follow-up ① then the docs"], what="the steer gone")
    (remote.workspace / "go2").touch()
    tui.wait_text("Docs written.")
    wait_until(lambda: len(server.chat_bodies) == 4, what="four model requests")
    # The steer that stayed landed after the command's result; the dropped one did not.
    *_, result, steered = server.chat_bodies[1]["messages"]
    assert result["role"] == "tool" and "through" in result["content"]
    assert steered == {"role": "user", "content": "use tabs"}
    assert last_user(server, 3) == {"role": "user", "content": "then the docs"}
    bodies = str(server.chat_bodies)
    assert "drop this steer" not in bodies and "not this one" not in bodies
    # Landed and run: nothing waits, there or here.
    wait_until(lambda: strip(tui) == [], what="the strip emptied")
    tui.submit("/queue")
    wait_said(tui, "Nothing waits.")
    assert tui.quit() == 0


def test_held_input_stays_with_its_session_and_resumes_there(world: World, sshd: SshServer) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    server.enqueue(Turn.tool_calls(call("run_command", {"command": GATED}, id="c1")))
    tui = connect(world, sshd, remote)
    host = sshd.alias
    start_gated_turn(tui)
    [first] = remote.sessions()
    send(tui, "held steer", ENTER)
    tui.wait_text(f"steering, on {host} ① held steer")
    send(tui, "first follow-up", CTRL_G)
    tui.wait_text("follow-up ② first follow-up")
    tui.send_hex(ESCAPE)  # stop: the remote holds its steer, this side its follow-up
    wait_said(tui, f"1 input waits held on {host}")
    tui.wait_text(f"steering, on {host} (held) ① held steer")
    tui.wait_text("follow-up (held) ② first follow-up")
    (remote.workspace / "go").touch()  # the interrupted command is gone anyway
    asked = len(server.chat_bodies)

    tui.submit("/new")
    tui.wait_text("New session")
    # The first session's input is not this one's: nothing of it shows, or runs, here.
    wait_until(lambda: strip(tui) == [], what="the strip emptied in the new session")
    tui.submit("/queue resume")
    wait_said(tui, "Nothing is held.")
    tui.submit("/queue")
    wait_said(tui, "Nothing waits.")
    assert len(server.chat_bodies) == asked
    wait_said(tui, f"1 follow-up queued here stays with session {first}")

    server.enqueue(Turn.text("Held steer done."), Turn.text("Follow-up done."))
    tui.submit(f"/sessions {first}")
    wait_said(tui, f"Session {first} loaded")
    wait_said(tui, "1 follow-up queued here for this session waits, held")
    tui.wait_text(f"steering, on {host} (held) ① held steer")
    tui.wait_text("follow-up (held) ② first follow-up")
    assert len(server.chat_bodies) == asked  # held: nothing runs unasked

    tui.submit("/queue resume")
    wait_said(tui, "Resumed 2 waiting inputs.")
    tui.wait_text("Follow-up done.")
    wait_until(lambda: len(server.chat_bodies) == asked + 2, what="two more requests")
    assert last_user(server, asked) == {"role": "user", "content": "held steer"}
    assert last_user(server, asked + 1) == {"role": "user", "content": "first follow-up"}
    assert tui.quit() == 0


def test_steering_held_by_a_dropped_connection_shows_after_reconnect_and_resumes(
    world: World, sshd: SshServer
) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    remote.command += " --yes"
    server.enqueue(Turn.tool_calls(call("run_command", {"command": GATED}, id="c1")))
    tui = connect(world, sshd, remote)
    host = sshd.alias
    tui.submit("format the files")
    wait_said(tui, "waiting")
    send(tui, "after the drop", ENTER)
    tui.wait_text(f"steering, on {host} ① after the drop")
    for pid in [pid for pid in _children(tui.pid) if _name(pid) == "ssh"]:
        os.kill(pid, signal.SIGKILL)
    wait_said(tui, "was lost during this turn")
    tui.wait_text(f"steering, on {host} (held) ① after the drop")  # the remote holds it
    asked = len(server.chat_bodies)

    server.enqueue(Turn.text("Ran after the reconnect."))
    tui.submit("/reconnect")
    tui.wait_text("Reconnected to", timeout=60)
    wait_said(tui, "it is held: nothing of it runs until it is resumed")  # the remote says
    tui.wait_text(f"steering, on {host} (held) ① after the drop")
    assert len(server.chat_bodies) == asked  # held: nothing runs unasked
    tui.submit("/queue resume")
    wait_said(tui, "Resumed 1 waiting input.")
    tui.wait_text("Ran after the reconnect.")
    assert last_user(server, asked) == {"role": "user", "content": "after the drop"}
    wait_until(lambda: strip(tui) == [], what="the strip emptied")
    tui.submit("/queue")
    wait_said(tui, "Nothing waits.")  # taken from there: it ran once, here
