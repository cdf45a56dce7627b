"""The MCP servers an editor passes in ``session/new`` and ``session/load``, connected
through zcoder's own MCP client (zcoder.mcp) beside the ones zcoder's files configure.

ACP lets the client hand the agent MCP servers: every agent takes stdio servers, and
``initialize`` says which others it takes (zcoder: streamable HTTP, not the older SSE).
Each becomes one more server entry of the session's MCP configuration, of the user's own
scope: the editor's user configured it, so it needs no consent (a project's ``.mcp.json``
still does, as in the terminal UI). Its tools reach the model as ``mcp__NAME__TOOL`` and
are approved as every MCP tool is. An entry zcoder cannot take (an SSE server, a name
that cannot be made a server name) is left out, and the log says why; the session opens.
A server named as one of zcoder's files names replaces it (the editor's is the one meant).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.schema import HttpMcpServer, McpServerStdio

from zcoder.mcp.config import ServerEntry, check_server_name

if TYPE_CHECKING:
    from zcoder.mcp.manager import McpManager
    from zcoder.options import McpLimits
    from zcoder.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

SOURCE = Path("session/new")
"""Where these entries come from, as problems and ``zcoder mcp`` name a file."""


def server_name(name: str) -> str | None:
    """The client's human-readable name as a server name (``mcp__NAME__TOOL``), or None."""
    made = re.sub(r"[^A-Za-z0-9_-]+", "-", name.strip())
    made = re.sub(r"_{2,}", "_", made).strip("-_")[:40].rstrip("-_")
    return made if made and check_server_name(made) is None else None


def client_entries(servers: Sequence[Any]) -> list[ServerEntry]:
    """The servers zcoder can connect, as configuration entries."""
    entries: dict[str, ServerEntry] = {}
    for server in servers:
        name = server_name(str(getattr(server, "name", "")))
        if name is None or name in entries:
            log.warning("MCP server from the editor left out: its name %r", server.name)
            continue
        if isinstance(server, McpServerStdio):
            env = tuple((v.name, v.value) for v in server.env)
            raw = {"command": server.command, "args": list(server.args), "env": dict(env)}
            entries[name] = ServerEntry(
                name,
                "user",
                SOURCE,
                "stdio",
                command=server.command,
                args=tuple(server.args),
                env=env,
                raw=raw,
            )
        elif isinstance(server, HttpMcpServer):
            headers = tuple((h.name, h.value) for h in server.headers)
            raw = {"type": "http", "url": server.url, "headers": dict(headers)}
            entries[name] = ServerEntry(
                name, "user", SOURCE, "http", url=server.url, headers=headers, raw=raw
            )
        else:
            log.warning(
                "MCP server %r from the editor left out: zcoder takes stdio and http servers,"
                " not %s",
                name,
                getattr(server, "type", type(server).__name__),
            )
    return list(entries.values())


def attach_client_mcp(
    registry: ToolRegistry,
    workspace: Path,
    home: Path | None,
    extra: Sequence[ServerEntry],
    limits: McpLimits | None = None,
) -> McpManager:
    """zcoder.mcp.attach_mcp with the editor's servers added to the configured ones."""
    from zcoder.mcp.manager import McpManager  # noqa: PLC0415 - only with servers
    from zcoder.mcp.tools import McpToolSource  # noqa: PLC0415

    manager = McpManager(workspace, home, extra=extra, limits=limits)
    for problem in manager.config.problems:
        log.warning("%s", problem)
    registry.add_source(McpToolSource(manager))
    return manager
