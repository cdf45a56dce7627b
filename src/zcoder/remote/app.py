"""``zcoder --connect``: the TUI of this machine around the agent of another.

``RemoteApp`` is the interactive app itself (tui/app.py) on a main screen whose start-up
connects instead of building an agent (``RemoteMainScreen``); the sessions, the model and
the relay are the remote zcoder's, and the slash commands that act on a local agent say
that they cannot (remote/parts.py). The transcript, the turn's worker,
the scheduler of queued prompts, the approval dialogs and the header are the same code as
in a local run: the turn worker calls ``run_user_turn`` on a RemoteAgent as it would on an
Agent, and its events come through the same AgentView.

The seed's rule holds: this process never publishes itself as a relay peer (no relay is
started here: the workspace and the agent loop live on the other host). ``/list-agents``
and ``/agents`` say that discovery is the remote host's and show its peers.

A dropped connection is said in the transcript and the header, the transcript stays, and
``/reconnect`` (F5) connects again and loads the session as the remote host saved it.

Enter while the remote turn runs steers it: the text goes to the remote's waiting input
(``_zcoder/input``, zcoder.acp.input) and lands in that turn at its next safe point, shown
here as steering where it landed; what no turn there took runs as a prompt after it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar, cast

from acp import RequestError
from textual.binding import Binding, BindingType

from zcoder.base.sanitize import visible
from zcoder.base.ssh_target import Target
from zcoder.config import Config
from zcoder.relay import RelayMode
from zcoder.remote.agent import RemoteAgent
from zcoder.remote.connection import ConnectionLost
from zcoder.remote.link import RemoteLink
from zcoder.remote.parts import RemoteParts
from zcoder.tui.app import ZcoderApp
from zcoder.tui.main_screen import MainScreen
from zcoder.tui.widgets.chat_pane import ChatPane
from zcoder.tui.widgets.transcript import Entry, user_text

if TYPE_CHECKING:
    from zcoder.agent import Agent
    from zcoder.tools.approval import (
        ApprovalDecision,
        Approver,
        CommandApprovalRequest,
        EditApprovalRequest,
    )
    from zcoder.tui.parts.services import Services

log = logging.getLogger(__name__)

__all__ = ["RemoteApp"]

DISCONNECTED = "Disconnected"


def local_config(config: Config) -> Config:
    """This machine's settings for the TUI alone: no relay here (the seed's rule)."""
    relay = dataclasses.replace(config.relay, mode=RelayMode.OFF)
    return dataclasses.replace(config, relay=relay)


class _DialogsWhenAsked:
    """The screen's approval dialogs, found when the remote agent first asks (they need
    the running app, which the screen has not yet when the agent is made)."""

    def __init__(self, dialogs: Callable[[], Approver]) -> None:
        self._dialogs = dialogs

    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        return await self._dialogs().approve_command(request)

    async def approve_edit(self, request: EditApprovalRequest) -> ApprovalDecision:
        return await self._dialogs().approve_edit(request)


class RemoteMainScreen(MainScreen):
    """The main screen around the remote agent: start-up connects, a drop is said."""

    def __init__(
        self,
        services: Services,
        *,
        exit: Callable[[int], object],
        target: Target,
        env: Mapping[str, str],
        resume: str | None,
        tune_gc: bool,
    ) -> None:
        super().__init__(services, exit=exit, tune_gc=tune_gc)
        remote = RemoteAgent(
            target,
            env,
            on_event=lambda event: parts.on_remote_event(event),  # noqa: PLW0108
            on_user=self.show_user_message,
            approver=_DialogsWhenAsked(lambda: self.parts.dialogs),
            on_dropped=self.connection_dropped,
        )
        self.link = RemoteLink(target, remote, target.host, self.reconnect)
        self.parts = parts = RemoteParts(
            services, self.say, self, exit=exit, resume=None, keep_model=False, link=self.link
        )
        services.session_id = resume  # the remote session to load, by id
        project = PurePosixPath(target.path).name if target.path else target.host
        self.header.refresh_state(
            host=f"ssh:{target.label}", model="remote", branch=None, project=project, mode=""
        )

    @property
    def remote(self) -> RemoteAgent:
        return self.link.remote

    def finish_start(self) -> None:
        """Start-up's second stage connects (in the background) instead of making an agent."""
        if not self.startup.begin():
            return
        self.install_sidebar()
        self.body.hidden_by_user = True  # the sessions are listed on the remote host
        self.chat.show_deferred_after(lambda: None)
        self.parts.relay_ui.refresh_header()
        self.run_later(self.connect, group="connect")

    def stop_services(self) -> None:
        super().stop_services()
        self.remote.shut()

    def show_user_message(self, text: str) -> None:
        """A user message of a loaded session (the agent's events do not show those)."""
        self.show(Entry("user", user_text(text)))

    # -- connecting -----------------------------------------------------------------------

    async def connect(self) -> None:
        """Connect and open the session: ``--resume``'s or the last one (loaded, after a
        drop: the transcript is then the session as the remote host saved it), else new."""
        link, services = self.link, self.services
        label = link.target.label
        self.say.header(status=f"Connecting to {label}")
        try:
            info = await self.remote.open()
        except ConnectionLost as exc:
            self._not_connected(f"could not connect to {label}: {exc}")
            return
        link.hostname = info.hostname or link.target.host
        resume = services.session_id
        try:
            session_id = await self.remote.open_session(resume, before_replay=self._reload)
        except (ConnectionLost, RequestError) as exc:
            self._not_connected(f"{label} did not open the session: {exc}")
            return
        services.session_id = session_id
        services.agent = cast("Agent", self.remote)  # the turn worker's agent (the docstring)
        project = PurePosixPath(self.remote.workspace).name or self.remote.workspace
        self.say.header(
            model=info.model or "remote",
            project=project,
            profile=info.profile,
            status="Ready",
        )
        if resume is not None:
            again = "Reconnected" if link.was_connected else "Connected"
            self.notice(
                f"{again} to {label} ({link.hostname}) over SSH: session {session_id} loaded "
                f"as saved there, in {self.remote.workspace}."
            )
        else:
            self.notice(
                f"Connected to {label} ({link.hostname}) over SSH: workspace "
                f"{self.remote.workspace}, session {session_id}. The agent, its tools, "
                "approvals and sessions are the remote zcoder's; approvals are answered here."
            )
        if resume is not None and self.remote.interrupted:
            listed = ", ".join(f"`{c}`" for c in self.remote.interrupted)
            self.notice(f"Interrupted when the connection was lost, and not run again: {listed}.")
        self.remote.interrupted = []
        link.was_connected = True
        self.parts.sessions.refresh()  # the sidebar (Ctrl+B) lists the remote sessions
        self.parts.relay_ui.refresh_header()
        self.app.refresh_bindings()  # F5 leaves the footer
        self.schedule()

    def _reload(self) -> None:
        """The session was loaded: the transcript becomes what the remote host saved."""
        self.transcript.clear()
        self.parts.agent_view.reset()

    def on_chat_pane_turn_ended(self, message: ChatPane.TurnEnded) -> None:
        super().on_chat_pane_turn_ended(message)
        if self.services.agent is not None and not self.remote.connected:
            self.say.header(status=DISCONNECTED)  # the turn's end said Error; this says why

    def _not_connected(self, text: str) -> None:
        self.error(f"{text}. /reconnect (F5) tries again.")
        self.say.header(status=DISCONNECTED)
        self.app.refresh_bindings()

    def connection_dropped(self, why: str) -> None:
        """The SSH connection ended (the remote agent with it): say so, keep the transcript."""
        link, session_id = self.link, self.services.session_id
        session = f" and loads session {session_id}" if session_id else ""
        self.error(
            f"The connection to {link.target.label} was lost ({why}). The transcript stays "
            f"here; /reconnect (F5) connects again{session} as {link.hostname} saved it."
        )
        if not self.busy:
            self.say.header(status=DISCONNECTED)
        self.parts.relay_ui.refresh_header()
        self.app.refresh_bindings()  # F5 comes back to the footer

    def reconnect(self) -> None:
        self.finish_start()
        if self.remote.connected:
            self.notice(f"Connected to {self.link.target.label} already.")
            return
        if self.busy:
            self.notice("Reconnecting is possible once the turn has ended.")
            return
        self.run_later(self.connect, group="connect")


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
        self._target, self._env = target, env  # for make_main_screen, which __init__ calls
        super().__init__(local_config(config), resume=resume, tune_gc=tune_gc)

    def make_main_screen(
        self, *, resume: str | None, keep_model: bool, tune_gc: bool
    ) -> RemoteMainScreen:
        return RemoteMainScreen(
            self.services,
            exit=self.exit,
            target=self._target,
            env=self._env,
            resume=resume,
            tune_gc=tune_gc,
        )

    @property
    def remote(self) -> RemoteAgent:
        return cast(RemoteMainScreen, self.main).remote

    def action_reconnect(self) -> None:
        cast(RemoteMainScreen, self.main).reconnect()

    def action_toggle_sidebar(self) -> None:
        super().action_toggle_sidebar()
        self.main.parts.sessions.refresh()  # the remote list, asked for only while shown

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
    if app.session_id is not None:
        with contextlib.suppress(OSError):
            print(resume_hint(target, app.session_id), flush=True)
    return int(code or 0)


def resume_hint(target: Target, session_id: str) -> str:
    """How to come back; the id is the remote agent's word, shown made visible."""
    return f"Resume this session with: zcoder --connect {target} --resume {visible(session_id)}"
