"""The watch view's rows and its tmux check, with no Textual and no tmux."""

from __future__ import annotations

import dataclasses

from tests.relay.test_activity import _manifest
from zcoder.watch.rows import COLUMNS, fit_columns, watch_rows
from zcoder.watch.tmux import go_to_pane


def test_agents_waiting_for_their_user_come_first_then_by_name() -> None:
    peers = [
        _manifest(instance_id="1-1", pid=1, project="alpha", activity="idle", activity_since=90),
        _manifest(instance_id="2-1", pid=2, project="zulu", activity="waiting for approval",
                  activity_since=40),
        _manifest(instance_id="3-1", pid=3, project="beta"),  # says nothing: its state
    ]  # fmt: skip
    rows = watch_rows(peers, now=100)
    assert [row.cells for row in rows] == [
        ("zulu", "waiting for approval for 1m", "-", "", "/w/web"),
        ("alpha", "idle for 10s", "-", "", "/w/web"),
        ("beta", "busy", "-", "", "/w/web"),
    ]
    assert [row.waiting for row in rows] == [True, False, False]


def test_a_hostile_peer_cannot_draw_on_the_view() -> None:
    peer = _manifest(project="x\x1b[2J", workspace="/w/\x1b]0;t\x07", activity="\x1b[5mhi")
    (row,) = watch_rows([peer], now=0)
    assert not any("\x1b" in cell or "\x07" in cell for cell in row.cells)


def test_outside_tmux_or_without_a_pane_the_view_says_why() -> None:
    (row,) = watch_rows([_manifest(tmux_pane="%3")], now=0)
    assert go_to_pane(row, {}) == "Not inside tmux: cannot switch to web's pane."
    bare = dataclasses.replace(row, pane="")
    assert "recorded no tmux pane" in go_to_pane(bare, {"TMUX": "/tmp/x,1,0"})


def test_in_a_narrow_terminal_a_workspace_keeps_its_end() -> None:
    peer = _manifest(workspace="/home/me/src/" + "deep/" * 20 + "billing")
    columns, (row,) = fit_columns(watch_rows([peer], now=0), 60)
    cells = row.shown(columns)
    workspace = cells[-1]
    assert workspace.endswith("/billing") and workspace.startswith("…")
    assert (
        sum(max(len(cell), len(title)) for cell, title in zip(cells, columns, strict=True))
        + len(cells) * 2
        + 1
        <= 60 + 2
    )
    _, (wide,) = fit_columns(watch_rows([peer], now=0), 200)
    assert wide.workspace == peer.workspace


def test_each_agent_shows_its_queue_and_the_last_receipt_it_got() -> None:
    peers = [
        _manifest(instance_id="1-1", pid=1, project="alpha", activity="thinking",
                  activity_since=990, queued=2, last_receipt="completed from web",
                  last_receipt_at=1000 - 180),
        _manifest(instance_id="2-1", pid=2, project="beta", queued=0),
    ]  # fmt: skip
    alpha, beta = watch_rows(peers, now=1000)
    assert alpha.cells[1:4] == ("thinking for 10s", "2", "completed from web, 3m ago")
    assert beta.cells[2:4] == ("0", "")
    columns, _ = fit_columns([alpha, beta], 140)
    assert columns == COLUMNS


def test_a_narrow_view_drops_the_last_receipt_first_then_the_queue() -> None:
    peer = _manifest(activity="waiting for approval", activity_since=1, queued=1,
                     last_receipt="completed from a-long-peer-name", last_receipt_at=1)  # fmt: skip
    rows = watch_rows([peer], now=100)
    assert fit_columns(rows, 60)[0] == ("NAME", "ACTIVITY", "QUEUE", "WORKSPACE")
    assert fit_columns(rows, 40)[0] == ("NAME", "ACTIVITY", "WORKSPACE")
    assert fit_columns(rows, 120)[0] == COLUMNS


def test_a_hostile_queue_or_receipt_cannot_draw_on_the_view_or_widen_it() -> None:
    peer = _manifest(last_receipt="\x1b]0;t\x07" + "x" * 70, last_receipt_at=5, queued=3)
    (row,) = watch_rows([peer], now=100)
    assert "\x1b" not in row.receipt and "\x07" not in row.receipt
    assert len(row.receipt) <= 48 and row.queue == "3"
