"""Same-host relay between zcoder instances: discovery, framing, listener, spool, client.

Nothing here imports the agent, the tools, the model client or the UI, so the relay can be
tested and reused alone. The one entry point for the rest of zcoder is :class:`Relay`.
"""

from zcoder.relay.client import NO_PEERS_TEXT, DiscoveryResult, Peer
from zcoder.relay.instance import Relay, RelayStatus, SendResult
from zcoder.relay.protocol import Envelope
from zcoder.relay.settings import RelayMode, RelaySettings, load_relay_settings
from zcoder.relay.spool import ClaimedMessage, ClaimResult, QuarantinedMessage

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
