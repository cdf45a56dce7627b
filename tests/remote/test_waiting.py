"""RemoteTurns alone: ``/queue drop`` and ``/queue resume`` over the connection when the
remote's list changed under them, with a fake remote agent answering ``_zcoder/input``
as the remote zcoder does (zcoder.acp.input) and the follow-ups here in the real
PendingInput. The end-to-end cases are tests/remote/test_queue.py's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from tests.tui.parts_support import part_context, services_for
from zcoder.base.ssh_target import Target
from zcoder.frontend.pending import InputKind, PendingItem
from zcoder.remote.connection import ConnectionLost
from zcoder.remote.link import RemoteLink
from zcoder.remote.turns import RemoteItem, RemoteTurns
from zcoder.tui.messages import ShowNotice

pytestmark = pytest.mark.timeout(30)

STEER, FOLLOW_UP = InputKind.STEER, InputKind.FOLLOW_UP


class FakeRemote:
    """What waits there, and the actions asked of it."""

    def __init__(self, *items: PendingItem) -> None:
        self.items = list(items)
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.connected = True

    async def waiting_input(self) -> list[PendingItem]:
        if not self.connected:
            raise ConnectionLost("ssh exited")
        return list(self.items)

    async def input_action(self, action: str, **params: Any) -> list[PendingItem]:
        self.asked.append((action, params))
        if action == "drop":
            del self.items[params["number"] - 1]
        elif action == "resume":
            self.items = [PendingItem(i.kind, i.text) for i in self.items]
        return list(self.items)


class Host:
    """Runs nothing by itself: the test awaits the part's coroutines."""

    def run_later(self, work: Any, *, group: str = "default", exit_on_error: bool = False) -> None:
        pass


def rig(tmp_path: Path, remote: FakeRemote, *, busy: bool = False) -> tuple[RemoteTurns, list[Any]]:
    services = services_for(tmp_path, tmp_path / "home", busy=lambda: busy)
    posted: list[Any] = []
    link = RemoteLink(Target("box"), cast(Any, remote), "box", lambda: None)
    turns = RemoteTurns(
        part_context(services, posted, cast(Any, Host())),
        model=cast(Any, None),
        relay=cast(Any, None),
        sessions=cast(Any, None),
        start=lambda *_a, **_k: None,
        show=lambda _e: None,
        show_queue=lambda: None,
        plan=lambda _p: None,
        link=link,
        queue=lambda _t: None,
    )
    return turns, posted


def said(posted: list[Any]) -> list[str]:
    return [m.text for m in posted if isinstance(m, ShowNotice)]


async def test_a_steer_that_landed_since_the_strip_was_drawn_drops_nothing_else(
    tmp_path: Path,
) -> None:
    remote = FakeRemote(PendingItem(STEER, "use tabs"), PendingItem(STEER, "keep comments"))
    turns, posted = rig(tmp_path, remote)
    await turns._refresh()
    assert [i.label for i in turns.waiting_items()] == ["steering, on box"] * 2
    remote.items.pop(0)  # "use tabs" landed there; the strip still shows it as 1
    await turns._queue("drop 1")
    assert remote.asked == []  # "keep comments", now first there, is not dropped
    assert "It waits no more on box" in said(posted)[-1]
    await turns._queue("drop 1")  # the list shown now: "keep comments" is 1
    assert remote.asked == [("drop", {"number": 1})] and remote.items == []


async def test_numbers_run_across_both_places_and_each_drop_acts_where_it_waits(
    tmp_path: Path,
) -> None:
    remote = FakeRemote(PendingItem(STEER, "there"))
    turns, posted = rig(tmp_path, remote)
    turns.services.pending.follow_up("here one")
    turns.services.pending.follow_up("here two")
    await turns._refresh()
    await turns._queue("drop 3")
    assert remote.asked == []
    assert [i.text for i in turns.services.pending.items()] == ["here one"]
    await turns._queue("drop 3")
    assert "no queued input number 3; there is 1 to 2" in str(posted[-1])
    await turns._queue("drop 1")
    assert remote.asked == [("drop", {"number": 1})]
    assert turns.waiting_items() == (PendingItem(FOLLOW_UP, "here one"),)


async def test_resume_during_a_turn_resumes_there_and_idle_takes_it_here_first(
    tmp_path: Path,
) -> None:
    held = [PendingItem(STEER, "steer", held=True), PendingItem(FOLLOW_UP, "there", held=True)]
    remote = FakeRemote(*held)
    busy, _ = rig(tmp_path, remote, busy=True)
    await busy._queue("resume")
    assert remote.asked == [("resume", {})]  # into the running turn there
    assert busy.remote_items == (
        RemoteItem(STEER, "steer", host="box"),
        RemoteItem(FOLLOW_UP, "there", host="box"),
    )

    remote = FakeRemote(*held)
    idle, posted = rig(tmp_path, remote)
    idle.services.pending.follow_up("here")
    idle.services.pending.hold()
    await idle._queue("resume")
    assert remote.asked == [("drop", {"number": 1})] * 2 and remote.items == []
    # Taken here, first, as follow-ups that may run now: prompts, in order.
    assert idle.services.pending.follow_ups() == ["steer", "there", "here"]
    assert "Resumed 3 waiting inputs." in said(posted)


async def test_queue_with_the_connection_gone_lists_what_waited_there_as_held(
    tmp_path: Path,
) -> None:
    remote = FakeRemote(PendingItem(STEER, "use tabs"))
    turns, posted = rig(tmp_path, remote)
    await turns._refresh()
    remote.connected = False  # dropped: the remote holds what waited there
    await turns._queue("")
    *_, why, listing = said(posted)
    assert why == "Not connected to box: what waits there is as last seen."
    assert "1. steering, on box (held): use tabs" in listing
    assert "/queue resume runs what is held" in listing


class SlowFirstList(FakeRemote):
    """Its first list is taken at once and answered only once ``answer`` is set."""

    def __init__(self, *items: PendingItem) -> None:
        super().__init__(*items)
        self.answer = asyncio.Event()
        self.lists = 0

    async def waiting_input(self) -> list[PendingItem]:
        self.lists += 1
        snapshot = await super().waiting_input()
        if self.lists == 1:
            await self.answer.wait()
        return snapshot


async def test_an_older_list_answered_after_a_drop_does_not_bring_it_back(
    tmp_path: Path,
) -> None:
    remote = SlowFirstList(PendingItem(STEER, "use tabs"))
    turns, _ = rig(tmp_path, remote)
    turns.remote_items = (RemoteItem(STEER, "use tabs", host="box"),)
    late = asyncio.ensure_future(turns._refresh())  # asked before the drop
    await asyncio.sleep(0)
    await turns._queue("drop 1")
    assert remote.items == [] and turns.waiting_items() == ()
    remote.answer.set()
    await late  # its list still had "use tabs": not shown
    assert turns.waiting_items() == ()
