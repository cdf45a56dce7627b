"""Same-host relay between zcoder instances: discovery, framing, listener, spool, client.

Nothing here imports the agent, the tools, the model client or the UI, so the relay can be
tested and reused alone. The entry point for the rest of zcoder is :class:`Relay`; what
else the rest of zcoder may use is below, and outside this package code imports only this
face, never a module of it (tests/test_import_tree.py holds it to that). Wire builders
(zcoder.relay.protocol's encoders and requests) are not offered: only the relay speaks
its protocol.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from zcoder.relay.activity import (
        ACTIVITY_IDLE,
        ACTIVITY_RUNNING_COMMAND,
        ACTIVITY_THINKING,
        ACTIVITY_WAITING_FOR_APPROVAL,
        holding,
        pane_id,
    )
    from zcoder.relay.client import DiscoveryResult, Peer, discover
    from zcoder.relay.display import (
        NO_PEERS_TEXT,
        doing,
        from_words,
        last_receipt,
        paused_warning,
        peer_label,
        peer_list_for_model,
        peer_table,
        queue,
        sender_from,
        sender_label,
        sender_name,
        sender_words,
        steer_note,
    )
    from zcoder.relay.endpoint import RelayStatus
    from zcoder.relay.host_wait import RemoteAnswers, RemoteWait
    from zcoder.relay.hosts import (
        HostError,
        HostSendResult,
        ListedHosts,
        host_listing_for_model,
        host_peers,
        is_remote_target,
        listed_hosts,
        send_record,
        split_remote_target,
    )
    from zcoder.relay.instance import Relay
    from zcoder.relay.names import (
        BadName,
        Resolved,
        check_name,
        default_name,
        display_names,
        name_of,
        resolve_target,
    )
    from zcoder.relay.outbox import SendResult
    from zcoder.relay.peercred import is_same_or_descendant
    from zcoder.relay.progress import STAGES, STARTED, STEERED, Progress
    from zcoder.relay.protocol import DELIVERIES, QUEUE, STEER, Envelope, is_message_id
    from zcoder.relay.receipts import Receipt, SentMessage
    from zcoder.relay.registry import (
        RegistryError,
        check_registry_dir,
        choose_registry_dir,
    )
    from zcoder.relay.registry_watch import REFRESH_SECONDS, RegistryWatch, follow
    from zcoder.relay.scripts import agents_main, live_peers, send_main
    from zcoder.relay.settings import (
        DEFAULT_MAX_AUTO_TURNS,
        Inbound,
        RelayMode,
        RelaySettings,
        load_relay_settings,
    )
    from zcoder.relay.spool import (
        ClaimedMessage,
        ClaimResult,
        QuarantinedMessage,
        Sequences,
    )
    from zcoder.relay.standing import is_send_process
    from zcoder.relay.trust import BLOCK, TRUST, TrustError
    from zcoder.relay.via import client_label
    from zcoder.relay.watches import IdleNotice

# The names above are the whole face, each loaded when first used (zcoder.base.lazy): the
# listener process imports only the modules it runs, so it starts in a fraction of the
# time the whole package takes.
__getattr__, __dir__, __all__ = face(__name__, __file__)
