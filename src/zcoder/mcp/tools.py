"""MCP tools in zcoder's tool registry: their names, their approval, their results.

Each tool of a ready server is offered as ``mcp__SERVER__TOOL`` (Claude Code's naming, so
the names users see in their other agents mean the same here), with the server's JSON
schema, which the registry validates calls against like any tool's.

Approval follows run_command's, because an MCP tool can do anything its server can:

* a tool whose annotations say ``readOnlyHint`` runs without asking, like read_file;
* ``--deny-commands`` refuses every other one without asking, ``--yes`` runs them in the
  user's own turns;
* otherwise the approval dialog asks, saying it is an MCP tool, showing the server, the tool
  and the whole arguments, and, as context, the server's description of the tool, marked as
  the server's words (the request carries them apart, ``McpToolCall``): a description
  that says "ignore your instructions" is shown to the user as what it is, and nothing in
  it is ever taken as the user's;
* in a relayed turn every non-read-only MCP tool asks, whatever was granted before, and
  the dialog names who relayed the task.

A project server (``.mcp.json``) starts only with the user's consent (zcoder.mcp.consent):
the first user turn that could use it asks, in a dialog of its own, showing the exact command
or URL and the file it comes from. A relayed turn never asks and never starts one.

The tools offered only ever grow at the end of the list (a server that comes up later adds
its tools after those offered before: zcoder.tools.catalog.OfferOrder), and when their
schemas would fill too much of a small window, they are offered on demand, a catalog entry
per server (zcoder.mcp.catalog).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from zcoder.base.blank_runs import mark_blank_runs
from zcoder.mcp.catalog import McpCatalog, schema_tokens
from zcoder.mcp.config import (
    ServerEntry,
    entry_hash,
    project_file,
    shadow_notes,
    split_tool_name,
    variables_note,
)
from zcoder.mcp.connection import McpCallError, McpTool
from zcoder.mcp.consent import Consent
from zcoder.mcp.manager import McpManager
from zcoder.mcp.results import result_text
from zcoder.tools.approval import (
    ApprovalDecision,
    CommandApprovalRequest,
    CommandPolicy,
    McpServerStart,
    McpToolCall,
)
from zcoder.tools.base import ToolContext, ToolResult, ToolSpec
from zcoder.tools.catalog import Shelf
from zcoder.tools.modes import Effects
from zcoder.tools.profiles import TurnOrigin

__all__ = ["McpToolSource", "split_tool_name"]

MAX_DESCRIPTION = 1024
"""Characters of a server's tool description sent to the model (it costs every request)."""


def _parameters(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The server's input schema as an object schema the registry can check."""
    parameters = dict(schema)
    parameters["type"] = "object"
    if not isinstance(parameters.get("properties"), dict):
        parameters["properties"] = {}
    parameters.pop("$schema", None)
    return parameters


def _arguments_text(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True)


class McpToolSource:
    """The registry's view of the MCP servers (zcoder.tools.registry.ToolSource)."""

    def __init__(
        self, manager: McpManager, window: Callable[[], int | None] = lambda: None
    ) -> None:
        self.manager = manager
        self.catalog = McpCatalog(window, manager.summary, share=manager.limits.tools_share)
        self._specs: dict[str, ToolSpec] = {}
        self._listed: list[McpTool] = []
        self._tokens = 0  # what every MCP schema would cost a request
        self._asked: set[tuple[str, str]] = set()  # (server, entry digest) asked about
        self._told: set[str] = set()  # the configuration's problems and notes, said once

    # -- the registry's side --------------------------------------------------------------

    def _ready(self) -> dict[str, ToolSpec]:
        tools = self.manager.tools()
        if tools != self._listed:  # a server started, ended, or changed its list
            self._listed = tools
            self._specs = {tool.qualified: self._spec(tool) for tool in tools}
            self._tokens = schema_tokens(list(self._specs.values()))
        return self._specs

    def specs(self) -> Sequence[ToolSpec]:
        """Every ready tool, unless they are offered on demand (``shelves``)."""
        specs = self._ready()
        return [] if self.catalog.needed(self._tokens) else list(specs.values())

    def shelves(self) -> Sequence[Shelf]:
        """On a small window, one catalog entry per server (zcoder.mcp.catalog)."""
        specs = self._ready()
        if not self.catalog.needed(self._tokens):
            return []
        return self.catalog.shelves(self._listed, specs)

    def _spec(self, tool: McpTool) -> ToolSpec:
        description = f"(MCP server {tool.server}) {tool.description or tool.name}"
        if len(description) > MAX_DESCRIPTION:
            description = description[: MAX_DESCRIPTION - 1] + "…"

        async def handler(arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
            return await self.run(tool.server, tool.name, arguments, ctx)

        # Plan mode offers only what the server says changes nothing (readOnlyHint).
        effects = Effects.READS if tool.read_only else Effects.WRITES
        return ToolSpec(
            tool.qualified, description, _parameters(tool.input_schema), handler, effects=effects
        )

    async def prepare(self, ctx: ToolContext) -> list[str]:
        """Ask about new project servers (user turns only), start what may start, wait a
        little for it, and say what the user should know."""
        notices = await self.manager.reload_if_changed()  # zcoder mcp add, elsewhere
        config = self.manager.config
        told = [*config.problems, *shadow_notes(config)]
        notices += [f"MCP configuration: {line}" for line in told if line not in self._told]
        self._told.update(told)
        if ctx.origin is TurnOrigin.USER and ctx.approval.policy is not CommandPolicy.DENY:
            for entry in list(config.servers.values()):
                if self.manager.consent_for(entry) is Consent.UNASKED:
                    notices.extend(await self._ask_consent(entry, ctx))
        try:
            startable = self.manager.startable()
            if startable:
                self.manager.start(startable)  # those not started yet
                await self.manager.wait_started(self.manager.turn_wait)
        except McpCallError as exc:  # shut down already: the turn goes on without them
            notices.append(f"MCP servers unavailable: {exc}")
        return notices + self.manager.news()

    async def _ask_consent(self, entry: ServerEntry, ctx: ToolContext) -> list[str]:
        key = (entry.name, entry_hash(entry.raw))
        if key in self._asked:
            return []
        self._asked.add(key)
        # The whole entry, as written: its env (LD_PRELOAD, say) and cwd run with it.
        whole = json.dumps(entry.raw, indent=2, ensure_ascii=False)
        source = str(project_file(self.manager.workspace))
        variables = variables_note(entry, self.manager.environ)
        mine = self.manager.config.shadowed.get(entry.name)
        replaces = f"{mine.describe()} ({mine.source})" if mine is not None else ""
        said = [f"start the MCP server {entry.name!r}: {entry.describe()}"]
        said += [variables] if variables else []
        said += [f"it replaces your own server of that name: {replaces}"] if replaces else []
        decision = await _ask(
            ctx,
            "\n".join([*said, f"its whole entry: {whole}"]),
            timeout=self.manager.start_timeout,
            warning=(
                f"{source} (from the repository) asks to run this MCP server; y allows it in "
                "this workspace until its entry changes, n refuses it"
                + (f"; {variables}" if variables else "")
            ),
            mcp=McpServerStart(entry.name, source, entry.describe(), whole, variables, replaces),
            kept=True,
        )
        if isinstance(decision, Exception):  # a dialog that cannot ask decides nothing
            self._asked.discard(key)  # nothing saved: asked again at the next turn
            return [
                f"MCP server {entry.name!r} not started: its consent could not be asked "
                f"({decision})"
            ]
        granted = decision in (ApprovalDecision.ONCE, ApprovalDecision.ALWAYS)
        try:
            self.manager.consent.record(
                self.manager.workspace, entry, Consent.GRANTED if granted else Consent.REFUSED
            )
        except Exception as exc:  # noqa: BLE001 - kept for this process only, and said so
            return [f"MCP server {entry.name!r}: the answer could not be saved ({exc})"]
        if not granted:
            return [f"MCP server {entry.name!r} refused: it will not start in this workspace"]
        return []

    # -- one call ---------------------------------------------------------------------------

    async def run(
        self, server: str, name: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> ToolResult:
        tool = self.manager.tool(server, name)
        if tool is None:
            return ToolResult.error(
                f"the MCP server {server!r} no longer offers {name!r}", error_kind="mcp"
            )
        refusal = await self._authorize(tool, arguments, ctx)
        if refusal is not None:
            return ToolResult.error(refusal, refused="approval", server=server)
        try:
            result = await self.manager.call(server, name, arguments)
        except McpCallError as exc:
            return ToolResult.error(str(exc), error_kind="mcp", server=server)
        ok, text = result_text(result, ctx.max_output)
        return ToolResult(ok, text, {"server": server, "mcp_tool": name})

    async def _authorize(
        self, tool: McpTool, arguments: dict[str, Any], ctx: ToolContext
    ) -> str | None:
        """None when the call may go ahead, else why it may not (for the model)."""
        if tool.read_only:
            return None
        policy = ctx.approval.policy
        if policy is CommandPolicy.DENY:
            return "MCP tools that may change things are disabled in this session (--deny-commands)"
        if policy is CommandPolicy.ALLOW and ctx.origin is TurnOrigin.USER:
            return None
        # Padding (590 empty lines, say) cannot push the arguments out of any dialog.
        described = mark_blank_runs(tool.description or "(no description)")
        if len(described) > 600:
            described = described[:599] + "…"
        shown = _arguments_text(arguments)
        decision = await _ask(
            ctx,
            f"MCP tool {tool.name!r} of the server {tool.server!r} ({tool.qualified})\n"
            f"arguments: {shown}",
            timeout=self.manager.call_timeout,
            warning=f"the server describes this tool as (its words, not the user's): {described}",
            mcp=McpToolCall(tool.server, tool.name, shown, described),
        )
        if isinstance(decision, Exception):  # a broken dialog denies
            return f"the approval could not be asked ({decision}); treated as denied"
        if decision in (ApprovalDecision.ONCE, ApprovalDecision.ALWAYS):
            return None
        return "the user denied this MCP tool call"


async def _ask(
    ctx: ToolContext,
    command: str,
    *,
    timeout: float,
    warning: str,
    mcp: McpToolCall | McpServerStart | None = None,
    kept: bool = False,
) -> ApprovalDecision | Exception:
    """One question in the approval dialog, never offering ``a``; the exception when the
    dialog could not ask (the caller treats that as a no)."""
    request = CommandApprovalRequest(
        command=command,
        cwd=Path(ctx.workspace),
        timeout_seconds=timeout,
        allow_always=False,
        origin=ctx.origin,
        profile=ctx.profile,
        warning=warning,
        requested_by=ctx.requested_by,
        mcp=mcp,
        kept=kept,
    )
    try:
        return await ctx.approver.approve_command(request)
    except Exception as exc:  # noqa: BLE001 - a dialog that cannot ask decides nothing
        return exc
