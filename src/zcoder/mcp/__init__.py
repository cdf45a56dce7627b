"""zcoder's MCP client: the servers users already configure for other agents, as tools.

``config`` reads ``.mcp.json`` and ``$ZCODER_HOME/mcp.json``; ``consent`` keeps the user's
yes or no to each project server; ``manager`` runs the servers on a loop of their own;
``tools`` offers their tools through the registry with run_command's approval; ``attach``
joins them to an agent's registry; ``cli`` is ``zcoder mcp``. The SDK is imported only when
a server starts, so a session without MCP servers pays nothing for this package.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from zcoder.mcp.attach import LateMcp, attach_mcp, attach_or_wait

__getattr__, __dir__, __all__ = face(__name__, __file__)
