"""The sessions over ``zcoder --connect``: stored on the remote host, listed and opened
over the connection.

The remote ``zcoder --acp`` lists its workspace's sessions (ACP's ``session/list``,
zcoder.acp.listing) and loads one (``session/load``, which replays it). ``/sessions``
shows them in the transcript, ``/sessions ID`` opens one, and the sidebar (Ctrl+B; hidden
at start, since the local sessions are not these) lists them as a local run lists its
own, picked with Enter; it is asked for only while shown. Nothing is stored here but the
open session's id.

The follow-ups queued here (Ctrl+G) are the open session's: switching sessions keeps them,
in memory, with the session left (``kept``), and gives them back, held, when it is opened
again in this run (``/queue resume`` runs them); they never run in another session. The
remote's own waiting input is saved there, with its session.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from acp import RequestError

from zcoder.acp.listing import saved_session
from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.frontend.resume import session_lines
from zcoder.remote.connection import ConnectionLost
from zcoder.sessions import SessionInfo
from zcoder.tui.parts.sessions_ui import SessionsUI

if TYPE_CHECKING:
    from collections.abc import Callable

    from zcoder.remote.link import RemoteLink

__all__ = ["RemoteSessions"]

Listed = list[tuple[SessionInfo, int]]
"""The remote sessions, newest first, each with its count of messages."""


@dataclass(eq=False)
class RemoteSessions(SessionsUI):
    """The remote session, by id (``Services.session_id``); the store and the list are
    the remote host's."""

    _: KW_ONLY
    link: RemoteLink
    on_switched: Callable[[], None] = lambda: None
    """Another session is open (its remote waiting input is asked for: remote/turns.py)."""
    kept: dict[str, list[tuple[str, str]]] = field(default_factory=dict, init=False)
    """The follow-ups queued here for each session left, by id, until it is opened again."""

    def open_store(self) -> None:
        pass

    def open_initial(self) -> None:
        pass

    def refresh(self) -> None:
        """The sidebar, from the remote list, when it is shown (quietly: it is refreshed
        after every turn, and each refresh is a request over the connection; showing it
        with Ctrl+B refreshes it)."""
        column = self.sidebar.parent  # the sidebar (tui/widgets/shared.py's SideColumn)
        if self.link.remote.connected and column is not None and column.display:
            self.host.run_later(self._fill_sidebar, group="remote-sessions")

    async def _fill_sidebar(self) -> None:
        found = await self._remote_sessions(quiet=True)
        if found is not None:
            self.sidebar.show(self._listed([info for info, _ in found]), self.services.session_id)

    def listing(self) -> str:
        return (
            f"The sessions are stored on {self.link.target.label}: /sessions lists them, "
            "/sessions ID opens one."
        )

    def sessions_command(self, argument: str) -> None:
        """``/sessions [all]`` lists the remote workspace's sessions (asked over the
        connection); ``/sessions ID`` (a unique prefix is enough) opens one here."""
        if not self.link.remote.connected:
            self.say.error(f"not connected to {self.link.target.label}: /reconnect first")
            return
        typed = argument.strip()
        if typed.lower() in ("", "all"):
            self.show_one_shot = typed.lower() == "all"
            self.host.run_later(self._list, group="connect")
        elif self.services.busy():
            self.say.notice("Switching sessions is possible when no turn is running.")
        else:
            self.host.run_later(partial(self._open, typed), group="connect")

    async def _remote_sessions(self, *, quiet: bool = False) -> Listed | None:
        try:
            return [saved_session(listed) for listed in await self.link.remote.sessions()]
        except (ConnectionLost, RequestError) as exc:
            if not quiet:
                self.say.error(f"{self.link.target.label} did not list its sessions: {exc}")
            return None

    async def _list(self) -> None:
        found = await self._remote_sessions()
        if found is None:
            return
        current = self.services.session_id
        counts = {info.id: count for info, count in found}
        shown = self._listed([info for info, _ in found])
        label, workspace = self.link.target.label, self.link.remote.workspace
        lines = [
            f"Sessions of {workspace} on {label}, newest first; ● is this one. /sessions ID "
            "opens one here (a unique prefix of the id is enough), or pick one in the list."
        ]
        lines += session_lines(shown, counts=counts, current=current)
        if len(shown) < len(found):
            lines.append(
                f"{counted(len(found) - len(shown), 'session')} of --prompt runs not shown:"
                " /sessions all"
            )
        self.say.notice("\n".join(lines))
        self.sidebar.show(shown, current)
        self.show_list()  # as in a local run

    async def _open(self, typed: str) -> None:
        found = await self._remote_sessions()
        if found is None:
            return
        label = self.link.target.label
        ids = [info.id for info, _ in found]
        matches = [typed] if typed in ids else [i for i in ids if i.startswith(typed)]
        if len(matches) != 1:
            which = "no session" if not matches else counted(len(matches), "session")
            self.say.error(f"{which} of {label}'s workspace start with {visible(typed)!r}")
            return
        (session_id,) = matches
        if session_id == self.services.session_id:
            self.say.notice("That session is open already.")
            return
        try:
            await self.link.remote.open_session(session_id, before_replay=self._reload)
        except (ConnectionLost, RequestError) as exc:
            self.say.error(f"{label} did not open session {session_id}: {exc}")
            return
        self.say.header(status="Ready")  # the replay's updates are not a reply being written
        self.say.notice(f"Session {session_id} loaded as {label} saved it.")
        self._switched(session_id)
        self.refresh()

    def _reload(self) -> None:
        self.transcript.clear()
        self.agent_view.reset()

    def new_session(self) -> None:
        if self.services.busy():
            self.say.notice("Switching sessions is possible when no turn is running.")
            return
        if not self.link.remote.connected:
            self.say.error(f"not connected to {self.link.target.label}: /reconnect first")
            return
        self.host.run_later(self._new, group="connect")

    async def _new(self) -> None:
        label = self.link.target.label
        try:
            session_id = await self.link.remote.open_session(None)
        except (ConnectionLost, RequestError) as exc:
            self.say.error(f"{label} did not open a new session: {exc}")
            return
        if session_id == self.services.session_id:
            self.say.notice("This session is already new.")
            return
        self._reload()
        self.say.notice(f"New session {session_id} on {label}.")
        self._switched(session_id)
        self.refresh()

    def _switched(self, session_id: str) -> None:
        """``session_id`` is open: the follow-ups queued here stay with the one left (kept),
        and the ones kept for this one come back, held."""
        pending, left = self.services.pending, self.services.session_id
        if left is not None and len(pending):
            self.kept[left] = [(item.kind.value, item.text) for item in pending.items()]
            one = len(pending) == 1
            self.say.notice(
                f"{counted(len(pending), 'follow-up')} queued here {'stays' if one else 'stay'}"
                f" with session {left}: {'it comes' if one else 'they come'} back, held, when "
                "it is opened again."
            )
        pending.switch(None, self.kept.pop(session_id, []))
        self.services.session_id = session_id
        if waiting := len(pending):
            them = "it" if waiting == 1 else "them"
            self.say.notice(
                f"{counted(waiting, 'follow-up')} queued here for this session "
                f"{'waits' if waiting == 1 else 'wait'}, held: /queue lists {them}, "
                f"/queue resume runs {them}."
            )
        self.on_switched()

    def open_picked(self, session_id: str) -> None:
        self.host.run_later(partial(self._open, session_id), group="connect")
        self.focus_prompt()

    def last_reply(self) -> str | None:
        return self.link.remote.reader.last_reply

    def close(self) -> None:
        pass
