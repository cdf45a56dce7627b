"""``zcoder --connect``: the TUI of this machine around the agent of another.

``RemoteApp`` is the interactive app itself (tui/app.py), with the parts that are the
agent's host's business taken over: start-up connects instead of building an agent
(``RemoteStartup``), the sessions, the model and the relay are the remote zcoder's
(``RemoteSessions``, ``RemoteModel``, ``RemoteRelay``), and the slash commands that act
on a local agent say that they cannot (``RemoteSlash``). The transcript, the turn's worker,
the scheduler of queued prompts, the approval dialogs and the header are the same code as
in a local run: the turn worker calls ``run_user_turn`` on a RemoteAgent as it would on an
Agent, and its events come through the same AgentView.

The seed's rule holds: this process never publishes itself as a relay peer (no relay is
started here: the workspace and the agent loop live on the other host). ``/list-agents``
and ``/agents`` say that discovery is the remote host's and show its peers.

A dropped connection is said in the transcript and the header, the transcript stays, and
``/reconnect`` (F5) connects again and loads the session as the remote host saved it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Mapping
from functools import cached_property
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast

from acp import RequestError
from textual.binding import Binding, BindingType

from zcoder.config import Config
from zcoder.model.context import ContextWindow
from zcoder.relay.settings import RelayMode
from zcoder.remote.agent import RemoteAgent
from zcoder.remote.connection import ConnectionLost
from zcoder.remote.target import Target
from zcoder.tui.app import ZcoderApp
from zcoder.tui.chat_pane import ChatPane
from zcoder.tui.command_registry import commands
from zcoder.tui.model_ui import ModelUI
from zcoder.tui.relay_ui import RelayUI
from zcoder.tui.sessions_ui import SessionsUI
from zcoder.tui.slash import SlashCommands
from zcoder.tui.startup import Startup
from zcoder.tui.transcript import Entry, user_text

if TYPE_CHECKING:
    from textual.worker import Worker

    from zcoder.agent import Agent

log = logging.getLogger(__name__)

__all__ = ["RemoteApp"]

DISCONNECTED = "Disconnected"


def local_config(config: Config) -> Config:
    """This machine's settings for the TUI alone: no relay here (the seed's rule)."""
    relay = dataclasses.replace(config.relay, mode=RelayMode.OFF)
    return dataclasses.replace(config, relay=relay)


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
        if name in ("/help", "/?"):
            await super().run(name, argument)
            self.say.notice(
                f"Connected to {app.target.label} (zcoder --connect): /reconnect (F5) connects "
                "again after a drop and loads the session; /list-agents and /agents show the "
                "remote host's peers; the commands that act on a local agent say so. "
                "docs/remote.md has the rest."
            )
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


class RemoteStartup(Startup):
    """Start-up's second stage connects (in the background) instead of building an agent."""

    app: RemoteApp

    def finish(self) -> None:
        if self.finished or self.leaving:
            return
        self.finished = True
        app = self.app
        app.install_sidebar()
        app.body.hidden_by_user = True  # the sessions are listed on the remote host
        app.show_deferred_after(lambda: None)
        app.relay_ui.refresh_header()
        app.run_later(app.connect, group="connect")


class RemoteApp(ZcoderApp):
    BINDINGS: ClassVar[list[BindingType]] = [
        *ZcoderApp.BINDINGS,
        Binding("f5", "reconnect", "Reconnect"),
    ]

    def __init__(
        self,
        config: Config,
        target: Target,
        env: Mapping[str, str],
        *,
        resume: str | None = None,
        tune_gc: bool = False,
    ) -> None:
        super().__init__(local_config(config), resume=resume, tune_gc=tune_gc)
        self.target = target
        self.remote = RemoteAgent(
            target,
            env,
            on_event=self.agent_view.on_event,
            on_user=self.show_user_message,
            approver=self.dialogs,
            on_dropped=self.connection_dropped,
        )
        self.remote_session: str | None = resume
        self.hostname = target.host
        self._was_connected = False
        self.startup = RemoteStartup(self, resume=False, tune_gc=tune_gc)
        state = self.header_state
        state.host, state.model, state.branch = f"ssh:{target.label}", "remote", None
        state.project = PurePosixPath(target.path).name if target.path else target.host

    # -- the parts that are the remote host's -------------------------------------------

    @cached_property
    def sessions(self) -> SessionsUI:
        return RemoteSessions(self)

    @cached_property
    def model_ui(self) -> ModelUI:
        return RemoteModel(self)

    @cached_property
    def relay_ui(self) -> RelayUI:
        return RemoteRelay(self)

    @cached_property
    def slash(self) -> SlashCommands:
        return RemoteSlash(self)

    def show_user_message(self, text: str) -> None:
        """A user message of a loaded session (the agent's events do not show those)."""
        self.show(Entry("user", user_text(text)))

    # -- connecting -----------------------------------------------------------------------

    async def connect(self) -> None:
        """Connect and open the session: ``--resume``'s or the last one (loaded, after a
        drop: the transcript is then the session as the remote host saved it), else new."""
        label = self.target.label
        self.say.header(status=f"Connecting to {label}")
        try:
            info = await self.remote.open()
        except ConnectionLost as exc:
            self._not_connected(f"could not connect to {label}: {exc}")
            return
        self.hostname = info.hostname or self.target.host
        resume = self.remote_session
        try:
            session_id = await self.remote.open_session(resume, before_replay=self._reload)
        except (ConnectionLost, RequestError) as exc:
            self._not_connected(f"{label} did not open the session: {exc}")
            return
        self.remote_session = session_id
        self.agent = cast("Agent", self.remote)  # the turn worker's agent (see the docstring)
        project = PurePosixPath(self.remote.workspace).name or self.remote.workspace
        self.say.header(
            model=info.model or "remote",
            project=project,
            profile=info.profile,
            status="Ready",
        )
        if resume is not None:
            again = "Reconnected" if self._was_connected else "Connected"
            self.notice(
                f"{again} to {label} ({self.hostname}) over SSH: session {session_id} loaded "
                f"as saved there, in {self.remote.workspace}."
            )
        else:
            self.notice(
                f"Connected to {label} ({self.hostname}) over SSH: workspace "
                f"{self.remote.workspace}, session {session_id}. The agent, its tools, "
                "approvals and sessions are the remote zcoder's; approvals are answered here."
            )
        if resume is not None and self.remote.interrupted:
            listed = ", ".join(f"`{c}`" for c in self.remote.interrupted)
            self.notice(f"Interrupted when the connection was lost, and not run again: {listed}.")
        self.remote.interrupted = []
        self._was_connected = True
        self.relay_ui.refresh_header()
        self.refresh_bindings()  # F5 leaves the footer
        self.schedule()

    def _reload(self) -> None:
        """The session was loaded: the transcript becomes what the remote host saved."""
        self.transcript.clear()
        self.agent_view.reset()

    def on_chat_pane_turn_ended(self, message: ChatPane.TurnEnded) -> None:
        super().on_chat_pane_turn_ended(message)
        if self.agent is not None and not self.remote.connected:
            self.say.header(status=DISCONNECTED)  # the turn's end said Error; this says why

    def _not_connected(self, text: str) -> None:
        self.error(f"{text}. /reconnect (F5) tries again.")
        self.say.header(status=DISCONNECTED)
        self.refresh_bindings()

    def connection_dropped(self, why: str) -> None:
        """The SSH connection ended (the remote agent with it): say so, keep the transcript."""
        session = f" and loads session {self.remote_session}" if self.remote_session else ""
        self.error(
            f"The connection to {self.target.label} was lost ({why}). The transcript stays "
            f"here; /reconnect (F5) connects again{session} as {self.hostname} saved it."
        )
        if not self.busy:
            self.say.header(status=DISCONNECTED)
        self.relay_ui.refresh_header()
        self.refresh_bindings()  # F5 comes back to the footer

    def action_reconnect(self) -> None:
        self.finish_start()
        if self.remote.connected:
            self.notice(f"Connected to {self.target.label} already.")
            return
        if self.busy:
            self.notice("Reconnecting is possible once the turn has ended.")
            return
        self.run_later(self.connect, group="connect")

    def _stop_services(self) -> None:
        super()._stop_services()
        self.remote.shut()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "reconnect":
            return not self.remote.connected
        return super().check_action(action, parameters)


def run_remote(config: Config, target: Target, env: Mapping[str, str], **kwargs: Any) -> int:
    """The app until it exits; then how to come back to the remote session."""
    app = RemoteApp(config, target, env, tune_gc=True, **kwargs)
    try:
        code = app.run()
    finally:
        app._stop_services()
    if app.remote_session is not None:
        with contextlib.suppress(OSError):
            print(
                f"Resume this session with: zcoder --connect {target} --resume "
                f"{app.remote_session}",
                flush=True,
            )
    return int(code or 0)
