"""The relay in the app: starting it, its nudges and polling, the header's relay part,
relayed tasks waiting for the user (the auto-turn limit), ``/list-agents`` and ``/agents``.

The relay package knows nothing of the UI; this is the one place where the app talks to
it about anything but claiming a message for a turn. The listener thread only nudges the
screen (``RelayNudge``, tui/messages.py); everything here runs on the app's event loop.

It takes the services it uses (the relay it starts is ``Services.relay``), a ``Say``, a
``Host`` for its workers, and ``user_acted`` (the screen's: the user acted, relayed tasks
may run again), never the app.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from zcoder.base.plural import counted
from zcoder.base.sanitize import field_for_model, visible
from zcoder.relay import (
    BadName,
    QuarantinedMessage,
    Relay,
    RelayStatus,
    Sequences,
    check_name,
    is_send_process,
    name_of,
    peer_table,
)
from zcoder.slash.declared import RelayCommands
from zcoder.tui.messages import RelayNudge, RunNext
from zcoder.tui.parts.inbox_ui import InboxUI
from zcoder.tui.parts.relay_policy_ui import RelayPolicyUI
from zcoder.tui.parts.services import Part, PartContext
from zcoder.tui.widgets.transcript import Entry, system_text

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CONTINUE_KEY", "RELAY_POLL_SECONDS", "Backlog", "RelayNudge", "RelayUI"]

log = logging.getLogger(__name__)

RELAY_POLL_SECONDS = 1.0
CONTINUE_KEY = "F2"  # the app's binding for /agents continue


@dataclasses.dataclass(frozen=True)
class Backlog:
    """Relayed tasks not run yet, as of one look: what the header's relay part and the
    "ran without you" notice both say (``RelayUI.backlog``), so they cannot disagree."""

    queued: int  # accepted messages waiting their turn to run (not running, not held)
    held: int  # accepted messages held for the user (/agents held)
    ran_without_you: int  # relayed turns started since the user last acted
    waiting_for_you: bool  # they wait for the user (the auto-turn limit was reached)


def waiting_text(backlog: Backlog) -> str:
    """The transcript's notice while relayed tasks wait for the user."""
    waiting = backlog.queued
    return (
        f"{_tasks(backlog.ran_without_you)} ran without you; {waiting} more "
        f"{'is' if waiting == 1 else 'are'} waiting. /agents continue "
        f"(or {CONTINUE_KEY}) runs them."
    )


class RelayUI(Part, RelayCommands):
    """Starts and stops the Relay (``Services.relay``, None when it is off or did not
    start)."""

    def __init__(self, context: PartContext, *, user_acted: Callable[[], None]) -> None:
        super().__init__(context)
        self.user_acted = user_acted
        self.reason: str | None = None
        self._was_available = False
        self.inbox = InboxUI(context)  # the history and receipts
        self.policy = RelayPolicyUI(  # held messages, trust per peer, recovery
            context,
            inbox=self.inbox,
            report_quarantined=self.report_quarantined,
            refresh_header=self.refresh_header,
            user_acted=user_acted,
        )
        self._registry_mark: int | None = None  # the registry's mtime at the last look
        self._sharing: dict[str, str] = {}  # instance id -> label, peers sharing the workspace
        self._looking = False
        # The "ran without you" notice, kept up to date while the tasks wait for the user.
        self._waiting_notice: Entry | None = None

    @property
    def relay(self) -> Relay | None:
        return self.services.relay

    def start(self, *, spawn_now: bool = False) -> None:
        """Start the relay; its listener process is spawned once the next frame is drawn
        (the spawn briefly holds the interpreter lock), or at once with ``spawn_now``
        (--resume: its interpreter then starts on the other CPU while the resumed
        transcript's first frame is laid out, which takes far longer)."""
        config = self.services.config
        settings = config.relay
        if not settings.enabled:
            self.reason = settings.disabled_reason or "off (ZCODER_RELAY=off)"
            if settings.disabled_reason:
                self.say.notice(f"Agent relay is off: {settings.disabled_reason}")
            return
        relay = Relay(
            settings,
            workspace=config.workspace,
            profile=config.profile.value,
            model=self.services.model,
            name=config.agent_name,
            # Where it runs in tmux, for `zcoder agents --watch` (Relay checks the form).
            tmux_pane=os.environ.get("TMUX_PANE", "") if os.environ.get("TMUX") else "",
            home=config.home,
            on_message=self.nudge_from_thread,
            on_unavailable=lambda _reason: self.nudge_from_thread(),
            on_ready=self.nudge_from_thread,  # the header goes from starting to ready
            interactive=True,  # peers may trust it (zcoder.relay.standing)
        )
        status = relay.start(wait=False)  # its listener is spawned once drawn
        if not status.available:
            self.reason = status.reason
            self.say.notice(f"Agent relay unavailable: {status.reason}. Everything else works.")
            return
        self.services.relay = relay
        self._was_available = True
        # Peers see this instance a moment after the listener has started.
        if spawn_now:
            relay.finish_start()
        else:
            self.host.call_after_refresh(relay.finish_start)
        self.inbox.start(relay)
        if leftovers := relay.leftovers():
            count = sum(leftover.messages for leftover in leftovers)
            self.say.notice(
                f"A zcoder that stopped in this workspace left {counted(count, 'accepted message')}"
                " that never ran. /agents recover queues them"
                " here; /agents recover discard drops them (kept 7 days otherwise)."
            )

    def stop(self) -> None:
        if self.relay is not None:
            self.relay.stop()

    # -- the queue ----------------------------------------------------------------------

    def nudge_from_thread(self) -> None:
        """Called on the listener thread: post_message is the one thread-safe way in."""
        self.say.post(RelayNudge())

    def poll(self) -> None:
        """Every second: peers in this workspace, the header's relay part, and what
        waits to run (when idle)."""
        self.watch_workspace_peers()
        self.refresh_header()
        if not self.services.busy():
            self.say.post(RunNext())

    def sequences(self) -> Sequences:
        return self.relay.sequences() if self.relay is not None else Sequences(None, 0)

    def oldest_waiting(self) -> int | None:
        """The sequence of the oldest message that could be claimed now (not while paused)."""
        if self.relay is None or not self.relay.available or self.relay.paused:
            return None
        return self.relay.sequences().oldest_waiting

    def backlog(self, status: RelayStatus | None = None) -> Backlog:
        """The one look at the relayed tasks not run yet (the header and the notice);
        ``status``: the relay's, when the caller has just read it."""
        scheduler = self.services.scheduler
        if status is None and self.relay is not None:
            status = self.relay.status()
        return Backlog(
            queued=status.waiting if status is not None else 0,
            held=status.held if status is not None else 0,
            ran_without_you=scheduler.auto_turns,
            waiting_for_you=scheduler.holding(self.oldest_waiting()),
        )

    def announce_waiting(self, oldest: int | None) -> None:
        """Idle, and relayed tasks wait for the user: say so once, and in the header. The
        notice follows the count (``refresh_header``) for as long as they wait."""
        if self.relay is None or not self.services.scheduler.should_announce(oldest):
            return
        self._waiting_notice = Entry("system", system_text(""))
        self.say.show(self._waiting_notice)
        self.refresh_header()

    def report_quarantined(self, claimed: QuarantinedMessage) -> None:
        text = f"A relayed message was rejected and not run: {claimed.reason}"
        self.say.error(text)
        if self.services.agent is not None:
            self.services.agent.record_error(text, {"quarantined": claimed.name})

    def refresh_header(self) -> None:
        if self.relay is None:
            self.say.header(relay="off", queued=0, held=0)
            return
        status = self.relay.status()
        if self._was_available and not status.available:
            self._was_available = False
            self.reason = status.reason
            self.say.error(f"Agent relay stopped: {status.reason}. Everything else works.")
        backlog = self.backlog(status)
        # Peers see this instance once its listener answers (relay.finish_start).
        state = status.state if self.relay.ready or not status.available else "starting"
        self.say.header(
            relay=state,
            queued=backlog.queued,
            held=backlog.held,
            waiting=backlog.waiting_for_you,
        )
        self.services.activity.held(backlog.held)
        self.relay.set_queued(backlog.queued)  # for peers' `zcoder agents`: on a change only
        self._follow_backlog(backlog)

    def _follow_backlog(self, backlog: Backlog) -> None:
        """The waiting notice says what the header says; once the tasks no longer wait
        for the user it stays as it last was (what was true then)."""
        notice = self._waiting_notice
        if notice is None:
            return
        if not backlog.waiting_for_you:
            self._waiting_notice = None
            return
        body = system_text(waiting_text(backlog))
        if notice.plain != body.plain:
            notice.show_text(body)

    # -- /list-agents and /agents -------------------------------------------------------

    async def list_agents(self, _argument: str = "") -> None:
        if self.relay is None:
            self.say.notice(f"Agent relay is unavailable: {self.reason or 'off'}")
            return
        found = await asyncio.to_thread(self.relay.discover)
        if found.error:
            self.say.error(f"Agent discovery failed: {found.error}")
            return
        self.say.notice(peer_table(found.peers, width=self.host.columns()))

    def agents_command(self, argument: str) -> None:
        if self.relay is None:
            self.say.notice(
                f"Agent relay is unavailable: {self.reason or 'off'}.\n"
                "Set ZCODER_RELAY=on (the default) to let other zcoder instances reach this one."
            )
            return
        if argument == "pause":
            self.relay.pause()
            self.say.notice("Relay paused: new messages are refused; queued ones are kept.")
        elif argument == "resume":
            self.relay.resume()
            self.say.notice("Relay resumed.")
            self.say.post(RunNext())  # what waits may run now
        elif (
            argument == "held"
            or argument.startswith(("run ", "discard "))
            or argument
            in (
                "run",
                "discard",
            )
        ):
            self.policy.held_command(argument)
            return
        elif argument in ("recover", "recover discard"):
            self.policy.recover(discard=argument.endswith("discard"))
            return
        elif argument.split(" ", 1)[0] in ("trust", "block", "forget"):
            self.policy.trust_command(argument)
            return
        elif argument == "continue":
            waiting = self.backlog().queued if self.oldest_waiting() is not None else 0
            self.say.notice(
                f"Running the {_tasks(waiting)} that waited for you."
                if self.services.scheduler.limited and waiting
                else "Nothing waits for you; relayed tasks run as they come."
            )
            self.user_acted()
            return
        elif argument:
            self.say.error(
                "usage: /agents [pause | resume | continue | held | run N | discard N |"
                " trust NAME | block NAME | forget NAME]"
            )
            return
        status = self.relay.status()
        lines = [
            f"Relay: {'available' if status.available else 'unavailable'} · state {status.state}"
            f" · {status.waiting} queued · {status.running} running · {status.held} held",
            f"Name: {self.relay.name} · instance {status.instance_id}",
            f"Registry: {status.registry}",
        ]
        if status.reason:
            lines.append(f"Reason: {status.reason}")
        lines.append(self._auto_turns_line())
        lines.append(self.policy.trust_line())
        lines.append(
            "/agents pause refuses new messages; /agents resume accepts them again; "
            f"/agents continue ({CONTINUE_KEY}) runs those waiting for you."
        )
        self.say.notice("\n".join(lines))
        self.refresh_header()

    def rename(self, argument: str) -> None:
        """/rename NAME: this instance's name for its peers, in its manifest at once."""
        services = self.services
        if not argument:
            current = self.relay.name if self.relay is not None else services.config.agent_name
            self.say.notice(f"This instance is called {current}. /rename NAME changes it.")
            return
        try:
            name = check_name(argument)
        except BadName as exc:
            self.say.error(str(exc))
            return
        services.config = dataclasses.replace(services.config, agent_name=name)
        if self.relay is None:
            self.say.notice(f"Named {name}; the relay is off, so no peer sees it.")
            return
        self.relay.refresh_manifest(name=name)
        self.say.notice(f"Renamed: other agents now see this instance as {name}.")

    # -- other instances in this workspace --------------------------------------------

    def watch_workspace_peers(self) -> None:
        """When the registry changed (an instance came, went or changed), look again for
        live peers in this workspace or one around it or inside it."""
        relay = self.relay
        if relay is None or not relay.available or relay.registry is None or self._looking:
            return
        try:
            mark = os.stat(relay.registry).st_mtime_ns
        except OSError:
            return
        if mark == self._registry_mark:
            return
        self._registry_mark = mark
        self._looking = True
        self.host.run_later(
            partial(self._look_for_workspace_peers, relay),
            group="workspace-peers",
            exit_on_error=True,
        )

    async def _look_for_workspace_peers(self, relay: Relay) -> None:
        try:
            found = await asyncio.to_thread(relay.discover)
        finally:
            self._looking = False
        mine = Path(relay.workspace)
        sharing: dict[str, str] = {}
        registry = relay.registry
        for peer in found.peers:
            theirs = Path(peer.workspace)
            if not (theirs == mine or mine.is_relative_to(theirs) or theirs.is_relative_to(mine)):
                continue
            if registry is not None and await asyncio.to_thread(
                is_send_process, registry, peer.instance_id, peer.pid, peer.workspace
            ):
                continue  # a zcoder send passing through, not an agent working here
            where = "this workspace" if theirs == mine else visible(peer.workspace)
            sharing[peer.instance_id] = f"{name_of(peer)} (pid {peer.pid}, {where})"
        for instance_id, label in sharing.items():
            if instance_id not in self._sharing:
                self.say.notice(
                    f"Another zcoder works here too: {label}. Edits over changes the agent"
                    " has not seen are refused, and both agents are told."
                )
        self._sharing = sharing
        if self.services.agent is not None:
            self.services.agent.workspace_peers = "; ".join(
                field_for_model(v) for v in sharing.values()
            )

    def _auto_turns_line(self) -> str:
        scheduler = self.services.scheduler
        ran = _tasks(scheduler.auto_turns)
        limit = scheduler.max_auto_turns
        if scheduler.holding(self.oldest_waiting()):
            return (
                f"Waiting for you: {ran} ran without you; /agents continue ({CONTINUE_KEY}) "
                "runs the rest."
            )
        if limit == 0:
            return f"{ran} ran without you; no limit (ZCODER_RELAY_MAX_AUTO_TURNS=0)."
        return f"{ran} ran without you; at {limit} the rest wait (ZCODER_RELAY_MAX_AUTO_TURNS)."


def _tasks(n: int) -> str:
    return counted(n, "relayed task")
