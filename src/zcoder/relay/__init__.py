"""Same-host relay between zcoder instances: discovery, framing, listener, spool, client.

Nothing here imports the agent, the tools, the model client or the UI, so the relay can be
tested and reused alone. The one entry point for the rest of zcoder is :class:`Relay`.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zcoder.relay.client import DiscoveryResult, Peer
    from zcoder.relay.display import NO_PEERS_TEXT
    from zcoder.relay.endpoint import RelayStatus
    from zcoder.relay.instance import Relay
    from zcoder.relay.outbox import SendResult
    from zcoder.relay.protocol import Envelope
    from zcoder.relay.settings import RelayMode, RelaySettings, load_relay_settings
    from zcoder.relay.spool import ClaimedMessage, ClaimResult, QuarantinedMessage

# Loaded when first used (PEP 562): the listener process imports only the modules it runs,
# so it starts in a fraction of the time the whole package takes.
_WHERE = {
    "NO_PEERS_TEXT": "display",
    "DiscoveryResult": "client",
    "Peer": "client",
    "Relay": "instance",
    "RelayStatus": "endpoint",
    "SendResult": "outbox",
    "Envelope": "protocol",
    "RelayMode": "settings",
    "RelaySettings": "settings",
    "load_relay_settings": "settings",
    "ClaimedMessage": "spool",
    "ClaimResult": "spool",
    "QuarantinedMessage": "spool",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"zcoder.relay.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "NO_PEERS_TEXT",
    "ClaimResult",
    "ClaimedMessage",
    "DiscoveryResult",
    "Envelope",
    "Peer",
    "QuarantinedMessage",
    "Relay",
    "RelayMode",
    "RelaySettings",
    "RelayStatus",
    "SendResult",
    "load_relay_settings",
]
