"""The two relay tools: list_agents and send_agent_message.

Present only when this process's relay is available. During a relayed turn,
send_agent_message may reply only to that turn's exact sender: its schema then names
that one instance id, and dispatch refuses any other target on its own. The hosts the
user listed in ``relay.hosts`` join both (zcoder.agent.relay_hosts).
"""

from __future__ import annotations

import asyncio
import copy
import functools
from collections.abc import Sequence
from typing import Any, Final, Protocol

from zcoder.agent.relay_hosts import (
    LIST_HOSTS_DESCRIPTION,
    NOT_LISTED,
    TARGET_HOSTS_DESCRIPTION,
    HostTools,
)
from zcoder.agent.relay_waits import register_relay_waits
from zcoder.base.sanitize import field_for_model
from zcoder.relay import (
    DELIVERIES,
    STEER,
    DiscoveryResult,
    ListedHosts,
    Peer,
    Relay,
    Resolved,
    SendResult,
    is_remote_target,
    name_of,
    peer_list_for_model,
    resolve_target,
)
from zcoder.tools import ToolContext, ToolRegistry, ToolResult, ToolSpec, TurnOrigin
from zcoder.tools.base import Offered
from zcoder.tools.modes import Effects
from zcoder.tools.registry import ALIASES_KEY

LIST_AGENTS: Final = "list_agents"
SEND_AGENT_MESSAGE: Final = "send_agent_message"
RELAY_SENDER_KEY: Final = "relay_sender"  # ToolContext.extras: the sender of a relayed turn


class SendConfirmer(Protocol):
    """The user's yes or no before a delivery (a dialog in the TUI). Never skipped.

    Raises ConfirmationUnavailable when the question cannot be asked at all.
    """

    async def confirm_send(self, peer: Peer, message: str, *, steer: bool = False) -> bool:
        """``steer``: the message asks to steer the peer's running turn (said so)."""
        ...


class ConfirmationUnavailable(Exception):
    """The confirmation could not be asked (no room for the dialog, say); nothing is sent."""


SEND_DESCRIPTION: Final = (
    "Send a task to another zcoder instance on this machine, ONLY when the user explicitly "
    "asked to contact it. Send the smallest self-contained task; no secrets. The user "
    "confirms each delivery; 'accepted' only means queued, never that the work was done."
)
LIST_DESCRIPTION: Final = (
    "List the other zcoder instances on this machine, with their instance ids and state."
)


TARGET: Final = "target_instance_id"  # the design's name (the seed, zcoder.zsh)
TARGET_ALIAS: Final = "target"  # accepted too: what this tool called it for a while
DELIVERY: Final = "delivery"  # optional (issue 29): queue (the default) or steer


def _send_parameters(hosts: bool = False) -> dict[str, Any]:
    """``hosts``: the user listed other machines (relay.hosts), which the target may name."""
    target = TARGET_HOSTS_DESCRIPTION if hosts else "an instance id or unique name from list_agents"
    return {
        "type": "object",
        "properties": {
            TARGET: {"type": "string", "description": target},
            "message": {"type": "string", "description": "the task, as plain text"},
            DELIVERY: {"enum": list(DELIVERIES), "description": "steer: into its running turn"},
        },
        "required": [TARGET, "message"],
        ALIASES_KEY: {TARGET_ALIAS: TARGET},
    }


def relay_reply_target(ctx: ToolContext) -> str | None:
    value = ctx.extras.get(RELAY_SENDER_KEY)
    return value if isinstance(value, str) else None


def discovery_text(found: DiscoveryResult) -> str:
    if found.error:
        return f"Agent discovery is unavailable: {found.error}"
    return peer_list_for_model(found.peers)


def register_relay_tools(
    registry: ToolRegistry,
    relay: Relay,
    confirmer: SendConfirmer,
    hosts: ListedHosts | None = None,
) -> None:
    """``hosts``: the other machines the user listed (relay.hosts); none, and the tools
    are this machine's only, their schemas unchanged."""
    others = HostTools(hosts, relay) if hosts is not None and hosts.targets else None

    def available(_origin: TurnOrigin, _ctx: ToolContext) -> bool:
        return relay.available

    async def list_agents(_args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        found = await asyncio.to_thread(relay.discover)
        text = discovery_text(found)
        if others is not None:
            text += "\n\n" + await others.listing()
        return ToolResult(found.error is None, text, {"peers": len(found.peers)})

    async def send_agent_message(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        target = str(args.get(TARGET, "")).strip()
        message = str(args.get("message", ""))
        delivery = str(args.get(DELIVERY) or "")  # its enum is checked by the registry
        if ctx.origin.relayed:
            allowed = relay_reply_target(ctx)
            if target != allowed:
                return ToolResult.error(
                    f"during a relayed task you may reply only to its sender ({allowed}); "
                    f"{target!r} was refused",
                    refused="not_the_sender",
                )
        if not message.strip():
            return ToolResult.error("the message is empty; nothing was sent")
        if is_remote_target(target):  # HOST:NAME, on a host the user listed
            if others is None:
                return ToolResult.error(NOT_LISTED)
            resolved = await others.find(target)
        elif ctx.origin.relayed:  # the exact sender, never a name
            found = await asyncio.to_thread(relay.discover)
            peer = next((p for p in found.peers if p.instance_id == target), None)
            resolved = Resolved(peer, f"the sender {target!r} is no longer live")
        else:
            resolved = resolve_target((await asyncio.to_thread(relay.discover)).peers, target)
        peer = resolved.peer
        if peer is None:
            if resolved.candidates:
                return ToolResult.error(
                    f"{resolved.problem}; nothing was sent. Use one of these exact instance"
                    " ids: " + "; ".join(field_for_model(c) for c in resolved.candidates),
                    refused="ambiguous",
                )
            return ToolResult.error(
                f"{resolved.problem}; call list_agents and use a name or exact instance id from it"
            )
        target = peer.instance_id
        try:
            confirmed = await confirmer.confirm_send(peer, message, steer=delivery == STEER)
        except ConfirmationUnavailable as exc:
            return ToolResult.error(
                f"the user could not be asked to confirm ({exc}); nothing was sent"
            )
        if not confirmed:
            return ToolResult.error(
                f"the user declined to send this message to {field_for_model(name_of(peer))} "
                f"({peer.instance_id})",
                declined=True,
            )
        if peer.host and others is not None:
            return await others.send(peer, message, steer=delivery == STEER)
        result: SendResult = await asyncio.to_thread(
            functools.partial(relay.send, target, message, delivery=delivery)
        )
        return ToolResult(
            result.accepted,
            field_for_model(result.text),  # it names the peer's self-reported name
            {
                "status": result.status,
                "target": target,
                "message_id": result.message_id,
                DELIVERY: result.delivery,  # the receiver's word on a steer ("" if not asked)
            },
        )

    registry.register(
        ToolSpec(
            LIST_AGENTS,
            LIST_DESCRIPTION if others is None else LIST_HOSTS_DESCRIPTION,
            {"type": "object", "properties": {}},
            list_agents,
            available,
            Offered.WHILE_ON,
            Effects.READS,
        )
    )
    registry.register(
        ToolSpec(
            SEND_AGENT_MESSAGE,
            SEND_DESCRIPTION,
            _send_parameters(hosts=others is not None),
            send_agent_message,
            available,
            Offered.WHILE_ON,  # the design's contract: offered whenever the relay is on
        )
    )
    register_relay_waits(registry, relay)  # notify_when_idle, wait_for_receipt: on demand


def restrict_schemas(schemas: Sequence[dict[str, Any]], ctx: ToolContext) -> list[dict[str, Any]]:
    """In a relayed turn, send_agent_message's schema names only the exact sender.

    Only the target changes: the schema keeps the form it was given in (the model's, or
    the registry's with the other names it accepts: ToolSpec.schema)."""
    sender = relay_reply_target(ctx) if ctx.origin.relayed else None
    out = []
    for schema in schemas:
        if sender is not None and schema.get("function", {}).get("name") == SEND_AGENT_MESSAGE:
            restricted = copy.deepcopy(schema)
            restricted["function"]["parameters"]["properties"][TARGET] = {
                "type": "string",
                "description": "the sender of the relayed task you are working on (only)",
                "enum": [sender],
            }
            out.append(restricted)
        else:
            out.append(schema)
    return out
