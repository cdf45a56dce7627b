"""The app's parts that belong to the agent's host, as ``zcoder --connect`` has them.

Each is the local part's class with what acts on this machine replaced: the sessions are
the remote zcoder's (``/new`` opens one there; the list and the store are there), the
model and its context window are sized and warmed there (the meter comes with the remote's
usage updates), and the relay is the remote host's: nothing is started or published here,
and ``/list-agents`` and ``/agents`` show the remote host's peers. ``RemoteSlash`` carries
out the commands that work over the connection and says so for those that cannot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from acp import RequestError

from zcoder.model.context import ContextWindow
from zcoder.remote.connection import ConnectionLost
from zcoder.tui.command_registry import commands
from zcoder.tui.model_ui import ModelUI
from zcoder.tui.relay_ui import RelayUI
from zcoder.tui.sessions_ui import SessionsUI
from zcoder.tui.slash import SlashCommands

if TYPE_CHECKING:
    from textual.worker import Worker

    from zcoder.remote.app import RemoteApp

WORK_REMOTELY: Final = frozenset({"/help", "/output", "/copy", "/quit", "/new"})
"""The app's commands that work as they are over the connection."""

WHERE_TO_ASK: Final = {
    "/model": "the model is the remote zcoder's (its ZCODER_MODEL, or -m in ZCODER_REMOTE_COMMAND)",
    "/context": "the context window and what fills it are on the remote host (the header's "
    "meter shows how full it is)",
    "/compact": "compaction is the remote agent's (it compacts by itself when the window fills)",
    "/diff": "the edits are on the remote host, in its workspace",
    "/undo": "the edits are on the remote host, in its workspace",
    "/rename": "this zcoder publishes no relay peer: the remote host's zcoder is the agent",
    "/sessions": "the sessions are stored on the remote host: zcoder --connect HOST --resume ID "
    "opens one",
}


class RemoteSessions(SessionsUI):
    """The remote session, by id; the store and the list are the remote host's."""

    app: RemoteApp

    def __init__(self, app: RemoteApp) -> None:
        super().__init__(app, None)

    @property
    def session_id(self) -> str | None:
        return self.app.remote_session

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        pass  # the remote agent's (RemoteApp.remote_session)

    def open_store(self) -> None:
        pass

    def open_initial(self) -> None:
        pass

    def refresh(self) -> None:
        pass

    def listing(self) -> str:
        return f"The sessions are on {self.app.target.label}. {WHERE_TO_ASK['/sessions']}."

    def new_session(self) -> None:
        app = self.app
        if app.busy:
            self.say.notice("Switching sessions is possible when no turn is running.")
            return
        if not app.remote.connected:
            self.say.error(f"not connected to {app.target.label}: /reconnect first")
            return
        app.run_later(self._new, group="connect")

    async def _new(self) -> None:
        app = self.app
        try:
            session_id = await app.remote.open_session(None)
        except (ConnectionLost, RequestError) as exc:
            self.say.error(f"{app.target.label} did not open a new session: {exc}")
            return
        if session_id == app.remote_session:
            self.say.notice("This session is already new.")
            return
        app.remote_session = session_id
        app.transcript.clear()
        app.agent_view.reset()
        self.say.notice(f"New session {session_id} on {app.target.label}.")

    def switch_to(self, session_id: str) -> None:
        pass

    def last_reply(self) -> str | None:
        return self.app.remote.reader.last_reply

    def close(self) -> None:
        pass


class RemoteModel(ModelUI):
    """The model is sized, warmed and changed on the remote host: nothing to do here."""

    app: RemoteApp

    def refresh_meter(self, *, after: Any = None) -> None:
        pass  # the remote's usage updates set the meter

    def start_warmup(self) -> None:
        pass

    def cancel_warmup(self) -> None:
        pass

    def warmup_ended(self, event: Worker.StateChanged) -> bool:
        return False

    async def window_ready(self) -> ContextWindow:
        return ContextWindow(0, f"sized by the zcoder on {self.app.target.label}", "server")

    def check_allocation(self) -> None:
        pass

    async def pick(self) -> None:
        self.say.notice(f"/model over --connect: {WHERE_TO_ASK['/model']}.")


class RemoteRelay(RelayUI):
    """No relay here; the remote host's discovery, asked over the connection."""

    app: RemoteApp

    def start(self, *, spawn_now: bool = False) -> None:
        pass

    def refresh_header(self) -> None:
        shown = f"on {self.app.hostname}" if self.app.remote.connected else "—"
        self.say.header(relay=shown, queued=0, held=0, waiting=False)

    async def remote_peers(self, command: str) -> None:
        app = self.app
        where = (
            f"{command}: this zcoder is connected to {app.target.label} and publishes no relay "
            f"peer here; discovery is on the remote host ({app.hostname}), where the agent runs."
        )
        try:
            found = await app.remote.peers()
        except (ConnectionLost, RequestError) as exc:
            self.say.error(f"{where} It could not be asked: {exc}")
            return
        if found.get("error"):
            self.say.error(f"{where} Discovery failed there: {found['error']}")
            return
        self.say.notice(f"{where} Its peers:\n{found.get('table', '')}")


class RemoteSlash(SlashCommands):
    """Commands over the connection: the relay's are the remote host's, /reconnect is
    this mode's own, the rest run as in a local run or say why they cannot."""

    app: RemoteApp

    async def run(self, name: str, argument: str) -> None:
        app = self.app
        if name in ("/list-agents", "/agents"):
            await app.relay_ui.remote_peers(name)  # type: ignore[attr-defined]
            return
        if name == "/reconnect":
            app.action_reconnect()
            return
        if name in WHERE_TO_ASK:
            self.say.notice(
                f"{name} is not available over --connect: {WHERE_TO_ASK[name]}. "
                f"This zcoder is connected to {app.target.label}."
            )
            return
        if name not in WORK_REMOTELY and name.startswith("/") and self._known(name):
            self.say.notice(
                f"{name} acts on this machine's zcoder, and the agent runs on "
                f"{app.target.label}: it is not available over --connect."
            )
            return
        await super().run(name, argument)

    def _known(self, name: str) -> bool:
        command = commands().find(name)
        return command is not None and command.name not in WORK_REMOTELY
