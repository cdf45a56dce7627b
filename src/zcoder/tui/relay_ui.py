"""The relay in the app: starting it, its nudges and polling, the header's relay part,
``/list-agents`` and ``/agents``.

The relay package knows nothing of the UI; this is the one place where the app talks to
it about anything but claiming a message for a turn. The listener thread only nudges the
app (``RelayNudge``); everything here runs on the app's event loop.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.message import Message

from zcoder.relay import QuarantinedMessage, Relay
from zcoder.relay.display import peer_table

if TYPE_CHECKING:
    from zcoder.tui.app import ZcoderApp

RELAY_POLL_SECONDS = 1.0


class RelayNudge(Message):
    """Posted from the relay's listener thread: a message was queued."""


class RelayUI:
    """Owns the app's Relay (``relay`` is None when it is off or did not start)."""

    def __init__(self, app: ZcoderApp) -> None:
        self.app = app
        self.relay: Relay | None = None
        self.reason: str | None = None
        self._was_available = False

    def start(self) -> None:
        app = self.app
        settings = app.config.relay
        if not settings.enabled:
            self.reason = settings.disabled_reason or "off (ZCODER_RELAY=off)"
            if settings.disabled_reason:
                app.notice(f"Agent relay is off: {settings.disabled_reason}")
            return
        relay = Relay(
            settings,
            workspace=app.config.workspace,
            profile=app.config.profile.value,
            model=app.model,
            on_message=self.nudge_from_thread,
            on_unavailable=lambda _reason: self.nudge_from_thread(),
        )
        status = relay.start()
        if not status.available:
            self.reason = status.reason
            app.notice(f"Agent relay unavailable: {status.reason}. Everything else works.")
            return
        self.relay = relay
        self._was_available = True

    def stop(self) -> None:
        if self.relay is not None:
            self.relay.stop()

    # -- the queue ----------------------------------------------------------------------

    def nudge_from_thread(self) -> None:
        """Called on the listener thread: post_message is the one thread-safe way in."""
        self.app.post_message(RelayNudge())

    def poll(self) -> None:
        self.refresh_header()
        if not self.app.busy:
            self.app.schedule()

    def report_quarantined(self, claimed: QuarantinedMessage) -> None:
        text = f"A relayed message was rejected and not run: {claimed.reason}"
        self.app.error(text)
        if self.app.agent is not None:
            self.app.agent.record_error(text, {"quarantined": claimed.name})

    def refresh_header(self) -> None:
        header = self.app.header
        if self.relay is None:
            header.refresh_state(relay="off", queued=0)
            return
        status = self.relay.status()
        if self._was_available and not status.available:
            self._was_available = False
            self.reason = status.reason
            self.app.error(f"Agent relay stopped: {status.reason}. Everything else works.")
        header.refresh_state(relay=status.state, queued=status.queued)

    # -- /list-agents and /agents -------------------------------------------------------

    async def list_agents(self) -> None:
        if self.relay is None:
            self.app.notice(f"Agent relay is unavailable: {self.reason or 'off'}")
            return
        found = await asyncio.to_thread(self.relay.discover)
        if found.error:
            self.app.error(f"Agent discovery failed: {found.error}")
            return
        self.app.notice(peer_table(found.peers))

    def agents_command(self, argument: str) -> None:
        app = self.app
        if self.relay is None:
            app.notice(
                f"Agent relay is unavailable: {self.reason or 'off'}.\n"
                "Set ZCODER_RELAY=on (the default) to let other zcoder instances reach this one."
            )
            return
        if argument == "pause":
            self.relay.pause()
            app.notice("Relay paused: new messages are refused; queued ones are kept.")
        elif argument == "resume":
            self.relay.resume()
            app.notice("Relay resumed.")
            app.schedule()
        elif argument:
            app.error("usage: /agents, /agents pause, /agents resume")
            return
        status = self.relay.status()
        lines = [
            f"Relay: {'available' if status.available else 'unavailable'} · state {status.state}"
            f" · {status.queued} queued",
            f"Instance: {status.instance_id}",
            f"Registry: {status.registry}",
        ]
        if status.reason:
            lines.append(f"Reason: {status.reason}")
        lines.append("/agents pause refuses new messages; /agents resume accepts them again.")
        app.notice("\n".join(lines))
        self.refresh_header()
