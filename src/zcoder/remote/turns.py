"""The user's waiting input over ``zcoder --connect``: steering waits on the remote host,
follow-ups here.

Enter while the remote turn runs steers it: the text goes to the remote's waiting input
(``RemoteAgent.steer``, ``_zcoder/input``, zcoder.acp.input) and lands there at the turn's
next safe point, shown here as steering where it landed; what no turn there took runs as a
prompt after it. Ctrl+G's follow-ups wait here (``Services.pending``) and are sent as
prompts after the turn.

``/queue`` and the strip above the prompt show both, numbered once: first what waits on
the remote host (as its last ``list`` said: refreshed after each steer, each landing, each
turn's end, each connection and session switch), then the follow-ups here. ``/queue drop
N`` drops either where it waits; ``/queue resume`` lets both go: during a turn the remote's
held input goes on there; with nothing running, it is taken here (dropped there, then
queued here, first) and runs as prompts, as everything does over the connection.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from acp import RequestError

from zcoder.agent.events import UserSteered
from zcoder.base.errors import UsageError
from zcoder.base.plural import counted
from zcoder.frontend.pending import InputKind, PendingItem
from zcoder.remote.connection import ConnectionLost
from zcoder.tui.parts.turns import Turns, queue_listing, queue_number, short, unknown_control

if TYPE_CHECKING:
    from collections.abc import Callable

    from zcoder.remote.link import RemoteLink

__all__ = ["RemoteItem", "RemoteTurns"]


@dataclass(frozen=True)
class RemoteItem(PendingItem):
    """Input that waits on the remote host (its ``_zcoder/input`` list)."""

    host: str = ""

    @property
    def label(self) -> str:
        word = "steering" if self.kind is InputKind.STEER else "follow-up"
        where = f"{word}, on {self.host}"
        return f"{where} (held)" if self.held else where


@dataclass(eq=False)
class RemoteTurns(Turns):
    """Turns over the connection: Enter's steering goes to the remote's waiting input,
    and ``/queue`` and the strip show and act on it beside the follow-ups here."""

    _: KW_ONLY
    link: RemoteLink | None = None
    queue: Callable[[str], None] | None = None
    remote_items: tuple[RemoteItem, ...] = field(default=(), init=False)
    """What waits on the remote host, as its last answer listed it."""
    _asked: int = field(default=0, init=False)
    """Counts the lists asked for and shown: an answer to an older ask is not shown."""

    @property
    def _link(self) -> RemoteLink:
        assert self.link is not None
        return self.link

    @property
    def takes_steering(self) -> bool:
        return self.link is not None and self.link.remote.connected

    def waiting_items(self) -> tuple[PendingItem, ...]:
        return (*self.remote_items, *self.services.pending.items())

    # -- keeping the remote's list in view ---------------------------------------------------

    def schedule(self) -> None:
        """A turn ended, the connection was made, the user acted: the remote's list again
        (a stop or a drop left it held there, a turn's end took what it had)."""
        self.refresh_remote()
        super().schedule()

    def seen(self, event: object) -> None:
        """An event of the remote agent: steering that landed leaves its list. Not a
        consumer of the agent's events (AgentView is): it looks for one kind."""
        if isinstance(event, UserSteered):
            self.refresh_remote()

    def session_switched(self) -> None:
        """Another remote session is open: its list, not the last one's."""
        self._show_remote([])
        self.refresh_remote()

    def refresh_remote(self) -> None:
        if self.link is None:
            return
        if not self.link.remote.connected:
            self._dropped()
            return
        self.host.run_later(self._refresh, group="remote-input")

    def _dropped(self) -> None:
        """A dropped connection leaves what waited there held (the remote holds it)."""
        self._show_remote([replace(i, held=True) for i in self.remote_items])

    async def _refresh(self) -> str:
        """Ask for the remote's list and show it; why it could not be asked, else ""."""
        self._asked += 1
        asked = self._asked
        label = self._link.target.label
        try:
            items = await self._link.remote.waiting_input()
        except ConnectionLost:
            if asked == self._asked:
                self._dropped()
            return f"not connected to {label}: what waits there is as last seen"
        except RequestError as exc:  # an older remote zcoder, without _zcoder/input
            return f"{label} did not list what waits there: {exc}"
        if asked == self._asked:  # an older answer never replaces a newer one
            self._show_remote(items)
        return ""

    def _show_remote(self, items: list[PendingItem] | list[RemoteItem]) -> None:
        self._asked += 1  # newer than any list asked for before
        held_before = sum(item.held for item in self.remote_items)
        host = self._link.target.label
        self.remote_items = tuple(RemoteItem(i.kind, i.text, i.held, host=host) for i in items)
        self.show_queue()
        held = sum(item.held for item in self.remote_items)
        if held > held_before and self._link.remote.connected:
            self.say.notice(
                f"{counted(held, 'input')} {'waits' if held == 1 else 'wait'} held on {host}: "
                "/queue lists, /queue resume runs, /queue drop N drops."
            )

    # -- Enter: steering --------------------------------------------------------------------

    def steer(self, text: str) -> None:
        self.host.run_later(partial(self._steer, text), group="steer")  # a coroutine function

    async def _steer(self, text: str) -> None:
        assert self.queue is not None
        label = self._link.target.label
        try:
            taken = await self._link.remote.steer(text)
        except RequestError as exc:
            why = exc.data.get("details", exc) if isinstance(exc.data, dict) else exc
            self.say.error(
                f"{label} did not take it as steering: {why}. ↑ in the prompt brings it back."
            )
            return
        if not taken:  # the turn there ended first: a prompt of its own
            self.queue(text)
            return
        self.say.notice(
            f"Steering sent to the turn running on {label}: it lands after the tool call in "
            "progress, or, if the reply has none, as the next turn."
        )
        await self._refresh()  # shown above the prompt until it lands

    # -- /queue -----------------------------------------------------------------------------

    def queue_command(self, argument: str, /) -> None:
        """``/queue``, ``/queue drop N``, ``/queue resume``: on the remote's waiting input
        and the follow-ups here both, numbered as the strip numbers them."""
        self.host.run_later(partial(self._queue, argument), group="queue")

    async def _queue(self, argument: str) -> None:
        action, _, value = argument.strip().partition(" ")
        if action == "":
            if problem := await self._refresh():
                self.say.notice(f"{problem[:1].upper()}{problem[1:]}.")
            self.say.notice(queue_listing(self.waiting_items()))
        elif action == "drop":
            try:
                await self._drop(queue_number(value))
            except UsageError as exc:
                self.say.error(str(exc))
        elif action == "resume" and not value.strip():
            await self._resume()
        else:
            self.say.error(unknown_control(argument))

    async def _drop(self, number: int) -> None:
        """Drop item ``number`` as the strip showed it, where it waits."""
        shown = self.waiting_items()
        if not 1 <= number <= len(shown):
            have = f"1 to {len(shown)}" if shown else "nothing: the queue is empty"
            raise UsageError(f"no queued input number {number}; there is {have}")
        item = shown[number - 1]
        if isinstance(item, RemoteItem):
            if not await self._drop_there(item):
                return
        else:
            pending = self.services.pending
            at = next(n for n, mine in enumerate(pending.items(), 1) if mine == item)
            pending.drop(at)
        self.say.notice(f"Dropped {item.label} {number}: {short(item.text)}")

    async def _drop_there(self, item: RemoteItem) -> bool:
        """Drop ``item`` on the remote host, found in its list as it is now (a steer may
        have landed since the strip was drawn: then there is nothing to drop)."""
        remote, label = self._link.remote, self._link.target.label
        try:
            now = await remote.waiting_input()
            at = next(
                (n for n, i in enumerate(now, 1) if (i.kind, i.text) == (item.kind, item.text)),
                None,
            )
            if at is None:
                self._show_remote(now)
                self.say.notice(f"It waits no more on {label}: it landed, or ran, already.")
                return False
            self._show_remote(await remote.input_action("drop", number=at))
        except ConnectionLost:
            self.say.error(f"not connected to {label}: /reconnect first (it waits there, held)")
            return False
        except RequestError as exc:
            why = exc.data.get("details", exc) if isinstance(exc.data, dict) else exc
            self.say.error(f"{label} did not drop it: {why}")
            return False
        return True

    async def _resume(self) -> None:
        """Held input goes on: the remote's in its running turn, or, with nothing running,
        taken here (first: it was typed for the turn that stopped) and run as prompts."""
        remote, label = self._link.remote, self._link.target.label
        there = 0
        try:
            held = sum(item.held for item in await remote.waiting_input())
            if held and self.services.busy():
                self._show_remote(await remote.input_action("resume"))
                there = held
            elif held:
                await self._take()  # held here now: resumed with the rest below
        except ConnectionLost:
            if any(item.held for item in self.remote_items):
                self.say.error(f"not connected to {label}: what waits there stays held")
        except RequestError as exc:
            why = exc.data.get("details", exc) if isinstance(exc.data, dict) else exc
            self.say.error(f"{label} did not resume its waiting input: {why}")
        here = self.services.pending.resume()
        if not (here or there):
            self.say.notice("Nothing is held.")
            return
        self.say.notice(f"Resumed {counted(here + there, 'waiting input')}.")
        self.services.scheduler.note_user_acted()
        self.schedule()

    async def _take(self) -> None:
        """The remote's waiting input, dropped there one by one and put first among the
        follow-ups here, held (an item leaves there only once it is in hand here)."""
        remote, taken = self._link.remote, []
        try:
            for item in await remote.waiting_input():
                left = await remote.input_action("drop", number=1)
                taken.append(item.text)
                self._show_remote(left)
        finally:
            if taken:
                pending = self.services.pending
                mine = [(i.kind.value, i.text) for i in pending.items()]
                pending.restore([(InputKind.FOLLOW_UP.value, t) for t in taken] + mine)
