"""Two relay tools offered on demand: notify_when_idle and wait_for_receipt.

``notify_when_idle`` sends a peer one watch (zcoder.relay.watches) and returns at once;
when the peer is next idle its notice reaches this model as a context record, as a
receipt does (frontend.relay_inbox), and never starts a turn: an idle agent just shows it.

``wait_for_receipt`` waits inside the turn, bounded, for the receipt of a message this
instance sent. It is shown as the tool running; the turn's cancellation (Escape) ends it
at once: the wait is an await on a future the relay's thread settles, no thread is held.
A wait that would close a cycle of waits (zcoder.relay.waits) is refused before it starts.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, Final, TypeVar

from zcoder.agent.relay_wrapper import neutralise_body
from zcoder.base.sanitize import field_for_model
from zcoder.relay import Receipt, Relay, resolve_target
from zcoder.tools import ToolContext, ToolRegistry, ToolResult, ToolSpec, TurnOrigin
from zcoder.tools.base import Offered, arguments
from zcoder.tools.modes import Effects

NOTIFY_WHEN_IDLE: Final = "notify_when_idle"
WAIT_FOR_RECEIPT: Final = "wait_for_receipt"
WAIT_DEFAULT_SECONDS: Final = 120.0
WAIT_MAX_SECONDS: Final = 600.0
# How often a wait looks whether the peer is still there; its receipt wakes it at once.
GONE_CHECK_SECONDS: Final = 0.5

NOTIFY_DESCRIPTION: Final = "Be told once when an agent is next idle."
WAIT_DESCRIPTION: Final = "Wait for a sent message's receipt (id or target)."

_V = TypeVar("_V")


async def await_settled(
    subscribe: Callable[[Callable[[_V], None]], Callable[[], None]],
    timeout: float,
    gone: Callable[[], bool],
) -> tuple[_V | None, bool]:
    """(the value, False) once ``subscribe``'s callback gets it, (None, True) when ``gone``
    says first, (None, False) at ``timeout``. Cancelling the awaiting task ends it at once."""
    loop = asyncio.get_running_loop()
    settled: asyncio.Future[_V] = loop.create_future()

    def settle(value: _V) -> None:
        if not settled.done():
            settled.set_result(value)

    def arrived(value: _V) -> None:  # on whatever thread records it
        loop.call_soon_threadsafe(settle, value)

    stop = subscribe(arrived)
    deadline = loop.time() + timeout
    try:
        while True:
            left = deadline - loop.time()
            if left <= 0:
                return None, False
            try:
                return await asyncio.wait_for(
                    asyncio.shield(settled), min(left, GONE_CHECK_SECONDS)
                ), False
            except TimeoutError:
                if not settled.done() and await asyncio.to_thread(gone):
                    return None, True
    finally:
        stop()


def register_relay_waits(registry: ToolRegistry, relay: Relay) -> None:
    def available(_origin: TurnOrigin, _ctx: ToolContext) -> bool:
        return relay.available

    async def notify_when_idle(args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        target = str(args.get("target_instance_id", "")).strip()
        found = await asyncio.to_thread(relay.discover)
        resolved = resolve_target(found.peers, target)
        if resolved.peer is None:
            return ToolResult.error(f"{resolved.problem}; call list_agents")
        result = await asyncio.to_thread(relay.watch, resolved.peer.instance_id)
        return ToolResult(
            result.accepted,
            field_for_model(result.text),
            {"status": result.status, "message_id": result.message_id},
        )

    async def wait_for_receipt(args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        wanted = str(args.get("message_id", "")).strip()
        asked = float(args.get("timeout_s", WAIT_DEFAULT_SECONDS))
        timeout = min(max(asked, 0.0), WAIT_MAX_SECONDS)
        sent = [m for m in relay.receipts.sent() if not m.watch]  # tasks, not watches
        message = next((m for m in sent if m.message_id == wanted), None) or next(
            (m for m in reversed(sent) if wanted in (m.target_instance_id, m.target_label)),
            None,
        )
        if message is None:
            return ToolResult.error(f"no message {wanted!r} was sent from here to wait for")
        label = field_for_model(message.target_label or message.target_instance_id)
        refused = await asyncio.to_thread(relay.begin_wait, message.target_instance_id)
        if refused is not None:
            return ToolResult.error(refused, refused_cycle=True)
        try:
            receipt, gone = await await_settled(
                functools.partial(relay.receipts.subscribe, message.message_id),
                timeout,
                lambda: relay.is_gone(message.target_instance_id),
            )
        finally:
            # At once, even when the turn was cancelled (an await here could be cut short):
            # one small manifest write, as a state change is.
            relay.end_wait()
        meta = {"message_id": message.message_id}
        if isinstance(receipt, Receipt):  # (a task's subscription gets only its receipt)
            summary = neutralise_body(receipt.summary) or "(none given)"
            return ToolResult(
                True,
                f"Receipt from {label}: {receipt.outcome}. Summary (self-reported):\n{summary}",
                {**meta, "outcome": receipt.outcome},
            )
        if gone:
            return ToolResult.error(f"{label} is gone; no receipt will come", **meta)
        return ToolResult(True, f"still waiting: no receipt from {label} after {timeout:g} s", meta)

    registry.register(
        ToolSpec(
            NOTIFY_WHEN_IDLE,
            NOTIFY_DESCRIPTION,
            arguments({"target_instance_id": {"type": "string"}}, ["target_instance_id"]),
            notify_when_idle,
            available,
            Offered.ON_DEMAND,
        )
    )
    registry.register(
        ToolSpec(
            WAIT_FOR_RECEIPT,
            WAIT_DESCRIPTION,
            arguments(
                {
                    "message_id": {"type": "string"},
                    "timeout_s": {
                        "type": "number",
                        "default": WAIT_DEFAULT_SECONDS,
                        "maximum": WAIT_MAX_SECONDS,
                    },
                },
                ["message_id"],
            ),
            wait_for_receipt,
            available,
            Offered.ON_DEMAND,
            Effects.READS,
        )
    )
