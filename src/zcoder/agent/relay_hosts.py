"""The relay tools' other machines: the hosts the user listed in ``relay.hosts``.

``list_agents`` gives each listed host's agents after this machine's, under a heading that
names the host and how to send there (``HOST:NAME``); ``send_agent_message`` to
``HOST:NAME`` finds the agent among that host's, and, once the user said yes to a dialog
that names the host, sends through the remote ``zcoder send`` over ssh
(zcoder.relay.hosts), whose receiver treats it as any ``zcoder send``: never trusted. The
ssh connection stays open for its progress and receipt (zcoder.relay.host_wait), which
come back into this machine's relay as a local peer's do. A host the user did not list is
refused. With ``relay.hosts`` empty none of this exists,
and the tools' schemas and words are exactly this machine's.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Final

from zcoder.base.sanitize import field_for_model
from zcoder.base.ssh_target import TargetError
from zcoder.relay import (
    HostError,
    HostSendResult,
    ListedHosts,
    Peer,
    Relay,
    RemoteAnswers,
    RemoteWait,
    Resolved,
    host_listing_for_model,
    host_peers,
    name_of,
    resolve_target,
    split_remote_target,
)
from zcoder.tools import ToolResult

# As this machine's words (zcoder.agent.relay_tools), a few more: they cost every request.
LIST_HOSTS_DESCRIPTION: Final = (
    "List the other zcoder instances, here and on relay.hosts (project, pid, state, "
    "instance id, workspace, profile, model)."
)
TARGET_HOSTS_DESCRIPTION: Final = "an instance id or unique name from list_agents, or HOST:NAME"
NOT_LISTED: Final = (
    "sending to another machine needs it in relay.hosts ($ZCODER_HOME/settings.json); "
    "nothing was sent"
)
RECEIPT_COMES: Final = " It is on another machine: its receipt comes back here over SSH."


class HostTools:
    """The listed hosts, for the two relay tools (``env``: ssh's settings, read when used)."""

    def __init__(
        self, hosts: ListedHosts, relay: Relay | None = None, env: Mapping[str, str] = os.environ
    ) -> None:
        self.targets = hosts.targets
        self.env = env
        # Where receipts come back (none: the send is answered, and nothing follows it).
        self.answers = RemoteAnswers(relay) if relay is not None else None

    async def listing(self) -> str:
        """Every listed host's part of ``list_agents``, asked at once."""
        parts = await asyncio.gather(
            *(asyncio.to_thread(host_listing_for_model, t, self.env) for t in self.targets)
        )
        return "\n\n".join(parts)

    async def find(self, text: str) -> Resolved:
        """The agent ``HOST:NAME`` names on a listed host (a peer that names its host), or
        why not."""
        try:
            target, name = split_remote_target(text)
        except TargetError as exc:
            return Resolved(None, str(exc))
        if target not in self.targets:
            listed = ", ".join(t.label for t in self.targets)
            return Resolved(None, f"{target.label} is not in relay.hosts ({listed})")
        try:
            peers = await asyncio.to_thread(host_peers, target, self.env)
        except HostError as exc:
            return Resolved(None, field_for_model(str(exc)))
        found = resolve_target(peers, name)
        if found.peer is None:  # said with the host, and how to name a candidate there
            how = f" (send to {target.label}:ID)" if found.candidates else ""
            return Resolved(None, f"{found.problem} on {target.label}{how}", found.candidates)
        return found

    async def send(self, peer: Peer, message: str, *, steer: bool) -> ToolResult:
        """Send to ``peer`` (found by ``find``, confirmed by the user) by its exact id; once
        accepted, its progress and receipt are followed."""
        target = next(t for t in self.targets if t.label == peer.host)
        where = f"{field_for_model(name_of(peer))} on {target.label}"
        wait: RemoteWait | None = None
        try:
            wait = await asyncio.to_thread(
                RemoteWait, target, peer.instance_id, message, self.env, steer=steer
            )
            result = await asyncio.to_thread(wait.answer)
        except HostError as exc:
            if wait is not None:
                await asyncio.to_thread(wait.stop)
            return ToolResult.error(f"delivery to {where} failed: {field_for_model(str(exc))}")
        accepted = result.status in ("accepted", "duplicate")
        if accepted and result.message_id and self.answers is not None:
            self._follow(wait, result, peer, target.label, message)
        else:
            await asyncio.to_thread(wait.stop)
        return ToolResult(
            accepted,
            field_for_model(result.text) + (RECEIPT_COMES if accepted else ""),
            {
                "status": result.status,
                "target": f"{target.label}:{peer.instance_id}",
                "message_id": result.message_id,
                "host": target.label,
            },
        )

    def _follow(
        self, wait: RemoteWait, result: HostSendResult, peer: Peer, host: str, message: str
    ) -> None:
        answers, message_id = self.answers, result.message_id
        assert answers is not None and message_id is not None
        answers.sent(result, peer, host, message)
        wait.follow(
            lambda stage: answers.stage(message_id, host, peer.instance_id, stage),
            lambda outcome, summary: answers.receipt(
                message_id, host, peer.instance_id, outcome, summary
            ),
        )


__all__ = ["LIST_HOSTS_DESCRIPTION", "NOT_LISTED", "TARGET_HOSTS_DESCRIPTION", "HostTools"]
