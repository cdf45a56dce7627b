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
from typing import TYPE_CHECKING, Any, ClassVar, cast

from acp import RequestError
from textual.binding import Binding, BindingType

from zcoder.config import Config
from zcoder.relay.settings import RelayMode
from zcoder.remote.agent import RemoteAgent
from zcoder.remote.connection import ConnectionLost
from zcoder.remote.parts import RemoteModel, RemoteRelay, RemoteSessions, RemoteSlash
from zcoder.remote.target import Target
from zcoder.tui.app import ZcoderApp
from zcoder.tui.startup import Startup
from zcoder.tui.transcript import Entry, user_text

if TYPE_CHECKING:
    from zcoder.agent import Agent
    from zcoder.tui.model_ui import ModelUI
    from zcoder.tui.relay_ui import RelayUI
    from zcoder.tui.sessions_ui import SessionsUI
    from zcoder.tui.slash import SlashCommands

log = logging.getLogger(__name__)

__all__ = ["RemoteApp"]

DISCONNECTED = "Disconnected"


def local_config(config: Config) -> Config:
    """This machine's settings for the TUI alone: no relay here (the seed's rule)."""
    relay = dataclasses.replace(config.relay, mode=RelayMode.OFF)
    return dataclasses.replace(config, relay=relay)


class RemoteStartup(Startup):
    """Start-up's second stage connects (in the background) instead of building an agent."""

    app: RemoteApp

    def finish(self) -> None:
        if self.finished or self.leaving:
            return
        self.finished = True
        app = self.app
        app.install_sidebar()
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
            if resume is not None:
                self.transcript.clear()  # the session comes back as saved there
                self.agent_view.reset()
            session_id = await self.remote.open_session(resume)
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
            self.notice(
                f"Reconnected to {label} ({self.hostname}): session {session_id} loaded as "
                f"saved there, in {self.remote.workspace}."
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
        self.relay_ui.refresh_header()
        self.schedule()

    def _not_connected(self, text: str) -> None:
        self.error(f"{text}. /reconnect (F5) tries again.")
        self.say.header(status=DISCONNECTED)

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
        connection = self.remote.connection
        if connection is not None and connection.process.stdin is not None:
            # Its input ends: ssh ends the remote agent's, which saves and lets go.
            with contextlib.suppress(Exception):
                connection.process.stdin.close()

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
