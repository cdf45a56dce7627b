"""The parts of the TUI that are the remote host's business over ``zcoder --connect``.

The main screen's parts (tui/parts.py) are the same code in a local run and over the
connection, except these four, which take the remote link instead of local services:
the sessions (stored on the remote host: only the open one's id is known here), the
model (sized, warmed and changed there), the relay (none here; discovery is asked of
the remote host) and the slash commands that act on a local agent (they say why they
cannot). ``RemoteParts`` makes them in place of the local ones.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final

from acp import RequestError

from zcoder.model.context import ContextWindow
from zcoder.remote.connection import ConnectionLost
from zcoder.remote.link import RemoteLink
from zcoder.remote.sessions import RemoteSessions
from zcoder.slash.registry import commands
from zcoder.tui.model_ui import ModelUI
from zcoder.tui.parts import Parts
from zcoder.tui.relay_ui import RelayUI
from zcoder.tui.sessions_ui import SessionsUI
from zcoder.tui.slash import SlashCommands

if TYPE_CHECKING:
    from textual.worker import Worker

__all__ = ["WHERE_TO_ASK", "RemoteParts"]

WORK_REMOTELY: Final = frozenset({"/help", "/output", "/copy", "/quit", "/new", "/sessions"})
"""The app's commands that work as they are over the connection."""

WHERE_TO_ASK: Final = {
    "/model": "the model is the remote zcoder's (its ZCODER_MODEL, or -m in ZCODER_REMOTE_COMMAND)",
    "/context": "the context window and what fills it are on the remote host (the header's "
    "meter shows how full it is)",
    "/compact": "compaction is the remote agent's (it compacts by itself when the window fills)",
    "/diff": "the edits are on the remote host, in its workspace",
    "/undo": "the edits are on the remote host, in its workspace",
    "/rename": "this zcoder publishes no relay peer: the remote host's zcoder is the agent",
}


class RemoteModel(ModelUI):
    """The model is sized, warmed and changed on the remote host: nothing to do here."""

    def __init__(self, *args: Any, link: RemoteLink) -> None:
        super().__init__(*args)
        self.link = link

    def refresh_meter(self, *, after: Any = None) -> None:
        pass  # the remote's usage updates set the meter

    def start_warmup(self) -> None:
        pass

    def cancel_warmup(self) -> None:
        pass

    def warmup_ended(self, event: Worker.StateChanged) -> bool:
        return False

    async def window_ready(self) -> ContextWindow:
        return ContextWindow(0, f"sized by the zcoder on {self.link.target.label}", "server")

    def check_allocation(self) -> None:
        pass

    async def pick(self) -> None:
        self.say.notice(f"/model over --connect: {WHERE_TO_ASK['/model']}.")


class RemoteRelay(RelayUI):
    """No relay here; the remote host's discovery, asked over the connection."""

    def __init__(self, *args: Any, link: RemoteLink, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.link = link

    def start(self, *, spawn_now: bool = False) -> None:
        pass

    def refresh_header(self) -> None:
        shown = f"on {self.link.hostname}" if self.link.remote.connected else "—"
        self.say.header(relay=shown, queued=0, held=0, waiting=False)

    async def remote_peers(self, command: str) -> None:
        link = self.link
        where = (
            f"{command}: this zcoder is connected to {link.target.label} and publishes no "
            f"relay peer here; discovery is on the remote host ({link.hostname}), where the "
            "agent runs."
        )
        try:
            found = await link.remote.peers()
        except (ConnectionLost, RequestError) as exc:
            self.say.error(f"{where} It could not be asked: {exc}")
            return
        if found.get("error"):
            self.say.error(f"{where} Discovery failed there: {found['error']}")
            return
        self.say.notice(f"{where} Its peers:\n{found.get('table', '')}")


@dataclass(eq=False)
class RemoteSlash(SlashCommands):
    """Commands over the connection: the relay's are the remote host's, /reconnect is
    this mode's own, the rest run as in a local run or say why they cannot."""

    _: KW_ONLY
    link: RemoteLink
    relay: RemoteRelay = field(repr=False)

    async def run(self, name: str, argument: str) -> None:
        label = self.link.target.label
        if name in ("/list-agents", "/agents"):
            await self.relay.remote_peers(name)
            return
        if name == "/reconnect":
            self.link.reconnect()
            return
        if name in ("/help", "/?"):
            await super().run(name, argument)
            self.say.notice(
                f"Connected to {label} (zcoder --connect): /reconnect (F5) connects "
                "again after a drop and loads the session; /list-agents and /agents show the "
                "remote host's peers; the commands that act on a local agent say so. "
                "docs/remote.md has the rest."
            )
            return
        if name in WHERE_TO_ASK:
            self.say.notice(
                f"{name} is not available over --connect: {WHERE_TO_ASK[name]}. "
                f"This zcoder is connected to {label}."
            )
            return
        if name not in WORK_REMOTELY and name.startswith("/") and self._known(name):
            self.say.notice(
                f"{name} acts on this machine's zcoder, and the agent runs on "
                f"{label}: it is not available over --connect."
            )
            return
        await super().run(name, argument)

    def _known(self, name: str) -> bool:
        command = commands().find(name)
        return command is not None and command.name not in WORK_REMOTELY


@dataclass(eq=False)
class RemoteParts(Parts):
    """The main screen's parts with the remote host's four in place of the local ones."""

    _: KW_ONLY
    link: RemoteLink

    @cached_property
    def model_ui(self) -> ModelUI:
        return RemoteModel(self.services, self.say, self.screen, link=self.link)

    @cached_property
    def sessions(self) -> SessionsUI:
        return self.sessions_of(RemoteSessions, resume=None, link=self.link)

    @cached_property
    def relay_ui(self) -> RemoteRelay:
        return RemoteRelay(
            self.services,
            self.say,
            self.screen,
            user_acted=self.screen.note_user_acted,
            link=self.link,
        )

    @cached_property
    def slash(self) -> SlashCommands:
        return self.slash_of(RemoteSlash, link=self.link, relay=self.relay_ui)
