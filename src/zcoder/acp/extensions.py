"""zcoder's own ACP extension methods (``_zcoder/...``), for ``zcoder --connect``.

ACP leaves names that begin with an underscore to each implementation. A zcoder TUI
connected over SSH (zcoder.remote) asks its remote agent two things the protocol has no
method for:

* ``_zcoder/info``: where the agent runs (its working directory, which is the workspace a
  ``--connect host`` without a path opens; the host's name; the profile and version), so
  the TUI can open the session there and show the approval dialog as the remote asks it.
* ``_zcoder/peers``: the live zcoder instances of the agent's host. Discovery is local to
  the machine that runs the agent (the seed's rule: a remote client never publishes itself
  and nothing is bridged), so ``/list-agents`` over ``--connect`` shows these. Discovery
  only: nothing is published or created (zcoder.relay.scripts.live_peers).
* ``_zcoder/input``: a session's waiting input, steering and follow-ups (zcoder.acp.input;
  answered by the server, which holds the sessions).

``initialize`` names them in ``agentCapabilities._meta.zcoder`` (``extensions_offered``),
as the protocol asks of custom methods.

Any other ``_zcoder/...`` name is "method not found", as for an unknown method.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Mapping
from typing import Any

from acp import RequestError

from zcoder import __version__
from zcoder.acp.input import capability as input_capability
from zcoder.config import Config
from zcoder.relay import live_peers, peer_table

INFO = "zcoder/info"
PEERS = "zcoder/peers"


def extensions_offered() -> dict[str, Any]:
    """What ``initialize`` says of zcoder's methods, under ``_meta.zcoder``."""
    return {"info": True, "peers": True, "input": input_capability()}


async def extension_method(
    method: str, params: dict[str, Any], env: Mapping[str, str], config: Config | None
) -> dict[str, Any]:
    """``config``: the settings a session opened in the agent's directory would have."""
    if method == INFO:
        return {
            "cwd": os.getcwd(),
            "hostname": socket.gethostname(),
            "profile": config.profile.value if config is not None else "coding",
            "model": config.model if config is not None else "",
            "version": __version__,
        }
    if method == PEERS:
        peers, problem = await asyncio.to_thread(live_peers, env)
        return {
            "hostname": socket.gethostname(),
            "count": len(peers),
            "table": peer_table(peers),
            "error": problem,
        }
    raise RequestError.method_not_found(f"_{method}")
