"""/mcp: the MCP servers of this session, their state and tools, and what the user may do.

``/mcp`` lists every configured server with its state (not started, starting, ready,
failed with its reason, refused, needs consent, disabled), where it is configured and the
tools it offers (read-only ones marked: they run without asking). ``/mcp reconnect NAME``
stops a server and starts it again (a server that died, or one whose program was just
rebuilt); ``/mcp disable NAME`` and ``/mcp enable NAME`` turn one off or on in this
workspace, kept for later sessions (zcoder.mcp.switches). Consent to a project's server
is not given here: it is asked, with the exact command, at the next turn.

It reads the MCP manager from the services' agent when a command runs (the agent, and so
the manager, exists only once start-up has finished) and speaks by posting messages
(tui/messages.py), never through the app. Starting a server waits for it on the servers'
own loop, so the screen stays live meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from zcoder.base.plural import counted
from zcoder.slash.declared import McpCommands
from zcoder.tui.parts.services import Part

if TYPE_CHECKING:
    from zcoder.mcp.config import McpConfig
    from zcoder.mcp.manager import McpManager, ServerStatus

__all__ = ["McpUI"]

MAX_TOOLS_SHOWN: Final = 40
"""Tool names listed per server; more are counted."""
USAGE: Final = "/mcp, /mcp reload, /mcp reconnect NAME, /mcp enable NAME or /mcp disable NAME"
NO_SERVERS: Final = (
    "No MCP servers are configured. Add one with `zcoder mcp add NAME -- COMMAND`, or in "
    ".mcp.json at the project root (docs/extensions.md)."
)


def shadow_notes(config: McpConfig) -> list[str]:
    """zcoder.mcp.config.shadow_notes, imported when a manager exists (see _failures)."""
    from zcoder.mcp.config import shadow_notes as notes  # noqa: PLC0415

    return notes(config)


def _failures() -> tuple[type[Exception], ...]:
    """What the manager raises when it cannot do what /mcp asked. Imported when a manager
    exists (it imported them already): reading the command registry imports no MCP SDK."""
    from zcoder.mcp.config import McpConfigError  # noqa: PLC0415
    from zcoder.mcp.connection import McpCallError  # noqa: PLC0415

    return (McpConfigError, McpCallError, OSError)


def _state(status: ServerStatus) -> str:
    if status.state == "ready":
        count = len(status.tools)
        return f"ready, {counted(count, 'tool')}"
    return f"{status.state}: {status.reason}" if status.reason else status.state


def _tools(status: ServerStatus) -> str:
    names = [f"{t.name} (read-only)" if t.read_only else t.name for t in status.tools]
    shown = ", ".join(names[:MAX_TOOLS_SHOWN])
    if len(names) > MAX_TOOLS_SHOWN:
        shown += f", and {len(names) - MAX_TOOLS_SHOWN} more"
    return shown


def server_lines(statuses: list[ServerStatus], problems: list[str], notes: list[str]) -> str:
    """What /mcp shows: one block per server, then the configuration's problems and notes
    (a project server replacing one of the user's)."""
    lines = [f"MCP servers ({len(statuses)}):"]
    for status in statuses:
        entry = status.entry
        lines.append(f"  {entry.name} · {_state(status)}")
        lines.append(f"      {entry.scope}, {entry.source}: {entry.describe()}")
        if status.tools:
            lines.append(f"      tools: {_tools(status)}")
    lines += [f"  problem: {problem}" for problem in problems]
    lines += [f"  note: {note}" for note in notes]
    lines.append(
        "/mcp reconnect NAME starts one again; /mcp disable NAME, /mcp enable NAME turn one "
        "off or on in this workspace; /mcp reload reads the configuration again."
    )
    return "\n".join(lines)


class McpUI(Part, McpCommands):
    """/mcp. Takes its context, never the app: the agent's MCP servers (none before
    start-up finished or when none is configured)."""

    def _manager(self) -> McpManager | None:
        agent = self.services.agent
        return agent.mcp_now() if agent else None

    async def mcp_command(self, argument: str) -> None:
        words = argument.split()
        manager = self._manager()  # made now if a file names a server since the start
        if manager is not None:
            # Changed elsewhere (zcoder mcp add): read again, or always on /mcp reload.
            forced = words == ["reload"]
            try:
                changes = await (manager.reload() if forced else manager.reload_if_changed())
            except _failures() as exc:
                self.say.error(f"The MCP configuration could not be read again: {exc}")
                return
            for change in changes:
                self.say.notice(change)
            if forced and not changes:
                self.say.notice("The MCP configuration is as it was: nothing changed.")
        if manager is None or not (manager.config.servers or manager.config.problems):
            self.say.notice(NO_SERVERS)
            return
        if not words or words == ["reload"]:
            config = manager.config
            notes = shadow_notes(config)
            self.say.notice(server_lines(manager.statuses(), list(config.problems), notes))
            return
        action, names = words[0].lower(), words[1:]
        if action not in ("reconnect", "enable", "disable") or len(names) != 1:
            self.say.error(f"/mcp {argument.strip()}: not understood; use {USAGE}")
            return
        name = names[0]
        if name not in manager.config.servers:
            known = ", ".join(manager.config.servers) or "none"
            self.say.error(f"There is no MCP server {name!r}; configured: {known}")
            return
        if action == "disable":
            await self._switch(manager, name, enabled=False)
        elif action == "enable":
            if await self._switch(manager, name, enabled=True):
                await self._reconnect(manager, name)
        else:
            await self._reconnect(manager, name)

    async def _switch(self, manager: McpManager, name: str, *, enabled: bool) -> bool:
        try:
            await manager.set_enabled(name, enabled)
        except _failures() as exc:
            self.say.error(
                f"MCP server {name!r} could not be turned {'on' if enabled else 'off'}: {exc}"
            )
            return False
        if not enabled:
            self.say.notice(
                f"MCP server {name!r} is turned off in this workspace (kept for later "
                "sessions); its tools are no longer offered. /mcp enable turns it on."
            )
        return True

    async def _reconnect(self, manager: McpManager, name: str) -> None:
        self.say.notice(f"Starting the MCP server {name!r}…")
        try:
            refusal = await manager.reconnect(name)
        except _failures() as exc:
            self.say.error(f"MCP server {name!r} could not be started: {exc}")
            return
        if refusal is not None:
            self.say.error(f"MCP server {name!r} was not started ({refusal}).")
            return
        (status,) = [s for s in manager.statuses() if s.entry.name == name]
        line = f"MCP server {name!r}: {_state(status)}"
        if status.state == "ready":
            self.say.notice(f"{line}; its tools are offered from the next request.")
        else:
            self.say.error(line)
