"""The parts of the TUI that are the remote host's business over ``zcoder --connect``.

The main screen's parts (tui/parts/wiring.py) are the same code in a local run and over the
connection, except these five, which take the remote link instead of local services:
the sessions (stored on the remote host: only the open one's id is known here), the
model (sized, warmed and changed there), the relay (none here; discovery is asked of
the remote host), the slash commands that act on a local agent (they say why they
cannot) and steering (Enter while the remote turn runs: it goes to the remote's waiting
input: zcoder.remote.turns). ``RemoteParts`` makes them in place of the local ones.

Which commands run over the connection is their declaration's (zcoder.slash.declared):
one that applies to ``FrontEnd.REMOTE`` runs on the part registered for it, the rest are
refused with the declaration's ``remote_refusal`` or, without one, because they act on
this machine's zcoder. ``/reconnect`` is this mode's own control (also F5), not a
declared command.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, cast

from acp import RequestError

from zcoder.model.context import ContextWindow
from zcoder.remote.connection import ConnectionLost
from zcoder.remote.link import RemoteLink
from zcoder.remote.sessions import RemoteSessions
from zcoder.remote.turns import RemoteTurns
from zcoder.slash.declared import RelayCommands
from zcoder.slash.registry import FrontEnd, commands
from zcoder.tui.parts.model_ui import ModelUI
from zcoder.tui.parts.relay_ui import RelayUI
from zcoder.tui.parts.sessions_ui import SessionsUI
from zcoder.tui.parts.slash import SlashCommands
from zcoder.tui.parts.wiring import Parts

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.worker import Worker

    from zcoder.agent.events import AgentEvent
    from zcoder.tui.parts.services import PartContext

__all__ = ["RemoteParts", "where_to_ask"]


def where_to_ask(name: str) -> str:
    """Why the command ``name`` is not available over --connect: its declaration's."""
    command = commands().find(name)
    return "" if command is None else command.remote_refusal


class RemoteModel(ModelUI):
    """The model is sized, warmed and changed on the remote host: nothing to do here."""

    def __init__(self, context: PartContext, *, link: RemoteLink) -> None:
        super().__init__(context)
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
        self.say.notice(f"/model over --connect: {where_to_ask('/model')}.")


class RemoteRelay(RelayUI):
    """No relay here; the remote host's discovery, asked over the connection."""

    def __init__(
        self, context: PartContext, *, user_acted: Callable[[], None], link: RemoteLink
    ) -> None:
        super().__init__(context, user_acted=user_acted)
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


@dataclass(frozen=True)
class RemotePeers(RelayCommands):
    """/list-agents and /agents over the connection: the remote host's peers."""

    relay: RemoteRelay

    async def list_agents(self, _argument: str = "") -> None:
        await self.relay.remote_peers("/list-agents")

    async def agents_command(self, _argument: str) -> None:
        await self.relay.remote_peers("/agents")


@dataclass(eq=False)
class RemoteSlash(SlashCommands):
    """Commands over the connection: those declared for it run (the relay's are the
    remote host's), the rest say why they cannot; /reconnect is this mode's own."""

    _: KW_ONLY
    link: RemoteLink

    async def run(self, name: str, argument: str) -> None:
        label = self.link.target.label
        if name == "/reconnect":
            self.link.reconnect()
            return
        command = commands().find(name)
        if command is not None and not command.applies_to(FrontEnd.REMOTE):
            if command.remote_refusal:
                self.say.notice(
                    f"{name} is not available over --connect: {command.remote_refusal}. "
                    f"This zcoder is connected to {label}."
                )
            else:
                self.say.notice(
                    f"{name} acts on this machine's zcoder, and the agent runs on "
                    f"{label}: it is not available over --connect."
                )
            return
        await super().run(name, argument)

    def help_command(self, argument: str) -> None:
        super().help_command(argument)
        self.say.notice(
            f"Connected to {self.link.target.label} (zcoder --connect): /reconnect (F5) "
            "connects again after a drop and loads the session; /list-agents and /agents "
            "show the remote host's peers; the commands that act on a local agent say so. "
            "docs/remote.md has the rest."
        )


@dataclass(eq=False)
class RemoteParts(Parts):
    """The main screen's parts with the remote host's four in place of the local ones."""

    _: KW_ONLY
    link: RemoteLink
    front_end: ClassVar[FrontEnd] = FrontEnd.REMOTE

    @cached_property
    def model_ui(self) -> ModelUI:
        return RemoteModel(self.context, link=self.link)

    @cached_property
    def sessions(self) -> SessionsUI:
        return self.sessions_of(
            RemoteSessions,
            resume=None,
            link=self.link,
            on_switched=lambda: self.turns.session_switched(),  # noqa: PLW0108 - made on use
        )

    @cached_property
    def relay_ui(self) -> RemoteRelay:
        return RemoteRelay(self.context, user_acted=self.screen.note_user_acted, link=self.link)

    def relay_commands(self) -> RelayCommands:
        return RemotePeers(self.relay_ui)

    @cached_property
    def slash(self) -> SlashCommands:
        return self.slash_of(RemoteSlash, link=self.link)

    @cached_property
    def turns(self) -> RemoteTurns:
        return cast(
            "RemoteTurns",
            self.turns_of(RemoteTurns, link=self.link, queue=self.screen.queue_prompt),
        )

    def on_remote_event(self, event: AgentEvent) -> None:
        """The remote agent's events: to the transcript, and to what waits there."""
        self.agent_view.on_event(event)
        self.turns.seen(event)
