"""`zcoder agents --watch` in tmux, with two real zcoders and the fake model: an approval
dialog opening in one shows at the top of the view as "waiting for approval"; Enter on
it, a raw CR, switches tmux to that zcoder's pane (read back with `display -p`).

The view runs in a second window of the first zcoder's tmux server, as a user would open
it; keys go to panes by id, as bytes.
"""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from tests.e2e.harness import DIALOG_ARMED, World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call
from tests.relay.conftest import zcoder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]


def open_watch(zc: TmuxInstance) -> str:
    """``zcoder agents --watch`` in a new window of ``zc``'s tmux server (not made
    current); its pane id."""
    env = {key: value for key, value in zc.env.items() if key != "TERM"}
    assignments = " ".join(shlex.quote(f"{key}={value}") for key, value in env.items())
    command = (
        f'exec env -i TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" TERM="$TERM" {assignments} '
        f"{shlex.quote(sys.executable)} -m zcoder agents --watch"
    )
    return zc.tmux(
        "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "zc", "-n", "watch",
        f"sh -c {shlex.quote(command)}",
    ).strip()  # fmt: skip


def rows(zc: TmuxInstance, pane: str) -> list[str]:
    return zc.tmux("capture-pane", "-p", "-t", pane).splitlines()


def agent_rows(zc: TmuxInstance, pane: str) -> list[str]:
    """The table's rows below its heading line (NAME ACTIVITY WORKSPACE)."""
    lines = rows(zc, pane)
    heading = next((n for n, line in enumerate(lines) if "ACTIVITY" in line), None)
    return [] if heading is None else [line for line in lines[heading + 1 :] if line.strip()]


@pytest.mark.parametrize("size", [(60, 15), (140, 40)], ids=["60x15", "140x40"])
def test_an_agent_waiting_for_approval_comes_first_and_enter_switches_to_its_pane(
    world: World, size: tuple[int, int]
) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch asked.txt"})),
        Turn.text("done"),
    )
    zulu = start_in_tmux(world, "zulu", server, size=size)  # sorts after "beta" by name
    beta = start_in_tmux(world, "beta", world.server(demo=False), size=size)
    zulu_pane = zulu._display("#{pane_id}")
    watch = open_watch(zulu)

    def listed() -> list[str] | None:
        found = agent_rows(zulu, watch)
        return found if len(found) >= 2 and all("idle" in row for row in found[:2]) else None

    first = wait_until(listed, what="both agents idle in the view")
    assert "beta" in first[0] and "zulu" in first[1]  # by name while nobody waits

    zulu.tmux("send-keys", "-t", zulu_pane, "-H", *to_hex("touch it").split())
    zulu.wait_text("touch it")
    zulu.tmux("send-keys", "-t", zulu_pane, "-H", ENTER)
    zulu.wait_text(DIALOG_ARMED)

    def waiting_first() -> list[str] | None:
        found = agent_rows(zulu, watch)
        top = found[0] if found else ""
        return found if "zulu" in top and "waiting for approval" in top else None

    shown = wait_until(waiting_first, what="zulu waiting for approval at the top")
    assert any("beta" in row and "idle" in row for row in shown[1:])
    assert not (world.workspace("zulu") / "asked.txt").exists()

    zulu.tmux("select-window", "-t", "zc:watch")
    assert zulu._display("#{pane_id}") == watch
    zulu.tmux("send-keys", "-t", watch, "-H", ENTER)  # the cursor is on the top row
    try:
        wait_until(
            lambda: zulu._display("#{pane_id}") == zulu_pane, what="tmux to switch to zulu's pane"
        )
    except TimeoutError as exc:
        raise AssertionError("\n".join(rows(zulu, watch))) from exc
    wait_until(
        lambda: any("Switched to zulu" in line for line in rows(zulu, watch)),
        what="the view to say so",
    )
    # beta runs in another tmux server, whose pane ids collide with this one's (both
    # %0): its recorded pane is not followed to a pane here that is not beta's.
    zulu.tmux("select-window", "-t", "zc:watch")
    zulu.tmux("send-keys", "-t", watch, "-H", "1b", "5b", "42")  # Down
    zulu.tmux("send-keys", "-t", watch, "-H", ENTER)
    wait_until(
        lambda: any("beta does not run in pane %0" in line for line in rows(zulu, watch)),
        what="the view to refuse beta's pane",
    )
    assert zulu._display("#{pane_id}") == watch
    zulu.tmux("send-keys", "-t", watch, "-H", "71")  # q quits the view
    wait_until(lambda: "watch" not in zulu.tmux("list-windows", "-F", "#{window_name}"),
               what="the view to quit")  # fmt: skip
    del beta


def cell(zc: TmuxInstance, pane: str, name: str, title: str) -> str | None:
    """The cell under ``title`` in ``name``'s row of the view (None while not shown)."""
    lines = rows(zc, pane)
    heading = next((line for line in lines if "ACTIVITY" in line and title in line), None)
    row = next((line for line in lines if line.strip().startswith(name)), None)
    if heading is None or row is None:
        return None
    return (row[heading.index(title) :].split() or [""])[0]


@pytest.mark.parametrize("size", [(60, 15), (140, 40)], ids=["60x15", "140x40"])
def test_a_message_queued_in_one_agent_shows_in_the_view_and_zcoder_agents(
    world: World, size: tuple[int, int]
) -> None:
    """Two real zcoders: beta, busy in a turn, gets a message, which waits in its queue;
    zulu's user sees QUEUE 1 for beta in the view and in `zcoder agents --json`, then 0
    once beta ran it."""
    server = world.server(demo=False)
    server.enqueue(Turn.stall(before="working on it", seconds=30), Turn.text("ran the message"))
    zulu = start_in_tmux(world, "zulu", world.server(demo=False), size=size)
    beta = start_in_tmux(world, "beta", server, size=size)
    watch = open_watch(zulu)
    wait_until(lambda: cell(zulu, watch, "beta", "QUEUE") == "0", what="beta's queue 0")

    beta.submit("work")
    beta.wait_text("working on it")
    sent = zcoder(zulu.env, "send", "beta", "after that")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    wait_until(lambda: cell(zulu, watch, "beta", "QUEUE") == "1", what="beta's queue 1")
    listed = json.loads(zcoder(zulu.env, "agents", "--json").stdout)
    assert [r["queued"] for r in listed if r["name"] == "beta"] == [1]

    beta.send_key("\x1b")  # the turn stops; the message runs
    beta.wait_text("ran the message")
    wait_until(lambda: cell(zulu, watch, "beta", "QUEUE") == "0", what="beta's queue back to 0")
