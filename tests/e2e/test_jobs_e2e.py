"""Background commands as a user meets them (issue 30 item 7): the real zcoder in tmux,
keys as the bytes a terminal sends. The model starts a web server on 127.0.0.1 in the
background; the dialog says it will keep running, the header counts it, /jobs shows it
with its output, and however zcoder is left (Ctrl+Q, Ctrl+C twice, SIGTERM) nothing it
started is left running."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, patched_zcoder, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call
from zcoder.tools.escapees import TAG_VARIABLE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SERVER = "python3 -m http.server 0 --bind 127.0.0.1"
# An escapee too: a process that left the job's group with setsid.
COMMAND = f"(setsid sleep 600 &); {SERVER}"
CTRL_C, CTRL_Q = "03", "11"


def commands_of(zcoder_pid: int) -> list[int]:
    """Live processes carrying a command tag of this zcoder (tools/escapees.py)."""
    prefix = f"{TAG_VARIABLE}={zcoder_pid}-".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X") and any(item.startswith(prefix) for item in environ):
            found.append(int(entry.name))
    return found


def start_a_server(world: World, size: tuple[int, int]) -> TmuxInstance:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": COMMAND, "background": True})),
        Turn.text("The server runs as job 1."),
    )
    window = patched_zcoder("zcoder.tui.state.interrupt:QUIT_WINDOW_SECONDS=3600")
    zc = start_in_tmux(world, "alpha", server, size=size, python_args=window)
    zc.type_text("serve the docs")
    zc.send_hex(ENTER)
    zc.wait_text("Run this command in the background?")
    zc.wait_text("[y] run this command")
    assert "[a]" not in zc.screen_text  # no grant for a command that keeps running
    zc.answer_dialog("y")
    zc.wait_text("The server runs as job 1.")
    zc.wait_text("1 job")  # the header counts it
    zc.type_text("/jobs")
    zc.send_hex(ENTER)
    zc.wait_text("[1] running")
    zc.wait_text("Serving HTTP on 127.0.0.1")
    wait_until(lambda: len(commands_of(zc.pid)) >= 2, what="the job and its escapee")
    return zc


@pytest.mark.parametrize("size", [(60, 15), (140, 40)], ids=["60x15", "140x40"])
def test_a_background_server_is_shown_and_ended_when_zcoder_quits(
    world: World, size: tuple[int, int]
) -> None:
    zc = start_a_server(world, size)
    if size[0] >= 140:  # the call's entry on one row: it started, it did not complete
        assert f"{SERVER} — started in the background" in zc.screen_text
    pid = zc.pid
    zc.send_hex(CTRL_Q)
    assert zc.wait_exit() in (0, None)
    wait_until(lambda: commands_of(pid) == [], timeout=15, what="every job process to end")


@pytest.mark.parametrize("how", ["ctrl-c-twice", "sigterm"])
def test_jobs_end_on_ctrl_c_twice_and_on_sigterm(world: World, how: str) -> None:
    zc = start_a_server(world, (60, 15))
    pid = zc.pid
    if how == "sigterm":
        os.kill(pid, signal.SIGTERM)
    else:
        zc.send_hex(CTRL_C, CTRL_C)
    zc.wait_exit()
    wait_until(lambda: commands_of(pid) == [], timeout=15, what="every job process to end")


def test_jobs_stop_ends_one_and_the_header_count_goes(world: World) -> None:
    zc = start_a_server(world, (60, 15))
    zc.type_text("/jobs stop 1")
    zc.send_hex(ENTER)
    zc.wait_text("Stopped job 1: killed.")
    zc.wait_gone("1 job")
    wait_until(lambda: commands_of(zc.pid) == [], timeout=15, what="the job's processes to end")
    zc.send_hex(to_hex("/jobs stop 7"), ENTER)
    zc.wait_text("there is no job 7")
    assert zc.alive()


def test_jobs_at_60_columns_wraps_a_long_output_line_under_itself(world: World) -> None:
    server = world.server(demo=False)
    command = "seq -s ' ' 100 140; sleep 600"  # one line of 163 characters
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": command, "background": True})),
        Turn.text("started it"),
    )
    zc = start_in_tmux(world, "alpha", server, size=(60, 15))
    zc.type_text("start it")
    zc.send_hex(ENTER)
    zc.wait_text("[y] run this command")
    zc.answer_dialog("y")
    zc.wait_text("started it")
    zc.send_hex(to_hex("/jobs"), ENTER)
    zc.wait_text("[1] running")
    [first] = zc.rows_with("100 101")
    screen = zc.screen()
    assert screen[first].startswith("      100 101"), screen
    # Its wrapped rest stands under it, not at the entry's left edge.
    assert screen[first + 1].startswith("      1"), screen
