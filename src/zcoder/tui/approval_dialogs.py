"""The dialogs where a person decides on a command or a message: run_command's approval
(``ApprovalScreen``), an MCP tool call's (``McpApprovalScreen``) and the confirmation of a
relayed send (``ConfirmSendScreen``).

Neither starting a project's MCP server nor an MCP tool call is a shell command, and
their dialogs say so (``McpStartScreen``, ``McpApprovalScreen``; ``approval_screen``
picks the one a request needs). An MCP tool call's dialog names the server and the
tool, shows the whole arguments, and shows the server's description of the tool as the
server's words (a server may write "ignore previous instructions" there; the user sees it
for what it is).

Both are ``GuardedDialog``s (tui/dialogs.py): what is approved is what was seen, and keys
meant for something else cannot answer them. The edit and /undo dialogs are in
tui/edit_dialogs.py.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

from zcoder.relay import Peer
from zcoder.relay.names import explicit_name
from zcoder.relay.sanitize import visible
from zcoder.tools import ApprovalDecision, CommandApprovalRequest
from zcoder.tools.approval import McpServerStart, McpToolCall
from zcoder.tui.dialogs import GuardedDialog
from zcoder.tui.widgets import screen_safe


class ApprovalScreen(GuardedDialog[ApprovalDecision]):
    """run_command approval: y once, a for the rest of the process (when offered), n/Esc."""

    def __init__(
        self, request: CommandApprovalRequest, *, give_back: Callable[[str], object] | None = None
    ) -> None:
        super().__init__(ApprovalDecision.DENY, give_back=give_back)
        self.request = request

    def title_text(self) -> Text:
        sender = self.request.requested_by
        if sender:
            return Text(f"Run this command? — asked by a task relayed {visible(sender)}")
        return Text("Run this command?")

    def meta(self) -> list[Static]:
        r = self.request
        widgets = [
            Static(
                Text(
                    f"in {screen_safe(str(r.cwd))} · timeout {r.timeout_seconds:g} s"
                    f" · {r.profile.value}"
                ),
                classes="meta",
            )
        ]
        if r.warning:
            widgets.append(Static(Text(f"warning: {screen_safe(r.warning)}"), classes="warning"))
        return widgets

    def body(self) -> str:
        return self.request.command

    def body_prefix(self) -> str:
        return "$ "

    def keys_text(self) -> str:
        r = self.request
        if r.allow_always:
            return "[y] run once   [a] allow commands for this process   [n]/Esc deny"
        if r.requested_by is not None:
            return "[y]/[a] run this one command   [n]/Esc deny   (a relayed task asks each time)"
        return "[y] run this command   [n]/Esc deny"

    def answer_for(self, key: str) -> ApprovalDecision | None:
        if key == "y":
            return ApprovalDecision.ONCE
        if key == "a":
            # Offered: the process-wide grant. In a relayed task's dialog `a` approves this
            # one command (the seed's rule); in sysadmin it is not an answer at all.
            if self.request.allow_always:
                return ApprovalDecision.ALWAYS
            return ApprovalDecision.ONCE if self.request.requested_by is not None else None
        if key == "n":
            return ApprovalDecision.DENY
        return None


def approval_screen(
    request: CommandApprovalRequest, give_back: Callable[[str], object] | None = None
) -> ApprovalScreen:
    """The dialog for ``request``: a command's, an MCP tool call's, or an MCP server's start."""
    if isinstance(request.mcp, McpToolCall):
        return McpApprovalScreen(request, give_back=give_back)
    if isinstance(request.mcp, McpServerStart):
        return McpStartScreen(request, give_back=give_back)
    return ApprovalScreen(request, give_back=give_back)


class McpStartScreen(ApprovalScreen):
    """Consent to a project's MCP server: y allows it in this workspace (until its entry
    changes) and starts it, n/Esc refuses it for good (asked again if the entry changes)."""

    @property
    def start(self) -> McpServerStart:
        assert isinstance(self.request.mcp, McpServerStart)
        return self.request.mcp

    def title_text(self) -> Text:
        return Text(f"Start the MCP server {visible(self.start.server)} this project names?")

    def meta(self) -> list[Static]:
        s = self.start
        return [
            Static(
                Text(
                    f"named by {screen_safe(s.source)} (from the repository) · "
                    f"start timeout {self.request.timeout_seconds:g} s"
                ),
                classes="meta",
            ),
            Static(
                Text(
                    "it runs a program the repository chose, on your machine; y allows it in "
                    "this workspace until its entry changes, n refuses it"
                ),
                classes="warning",
            ),
        ]

    def body(self) -> str:
        return f"{self.start.program}\n\nits whole entry:\n{self.start.entry}"

    def body_prefix(self) -> str:
        return ""

    def keys_text(self) -> str:
        return "[y] allow and start it   [n]/Esc refuse"


class McpApprovalScreen(ApprovalScreen):
    """An MCP tool call's approval: y runs this one call, n/Esc denies it (``a`` is never
    offered: each call that may change something asks)."""

    @property
    def call(self) -> McpToolCall:
        assert isinstance(self.request.mcp, McpToolCall)
        return self.request.mcp

    def title_text(self) -> Text:
        sender = self.request.requested_by
        title = (
            f"Run the MCP tool {visible(self.call.tool)} of the server {visible(self.call.server)}?"
        )
        if sender:
            return Text(f"{title} — asked by a task relayed {visible(sender)}")
        return Text(title)

    def meta(self) -> list[Static]:
        c, r = self.call, self.request
        return [
            Static(
                Text(
                    f"MCP server {screen_safe(c.server)} · tool {screen_safe(c.tool)}"
                    f" · timeout {r.timeout_seconds:g} s · {r.profile.value}"
                ),
                classes="meta",
            ),
            Static(
                Text(
                    "the server's description of this tool (its words, not yours): "
                    + screen_safe(c.description)
                ),
                classes="warning",
            ),
        ]

    def body(self) -> str:
        return self.call.arguments

    def body_prefix(self) -> str:
        return ""

    def keys_text(self) -> str:
        if self.request.requested_by is not None:
            return "[y]/[a] run this one call   [n]/Esc deny   (a relayed task asks each time)"
        return "[y] run this call   [n]/Esc deny"


class ConfirmSendScreen(GuardedDialog[bool]):
    """y/N before every send_agent_message delivery, with the exact target and message."""

    def __init__(
        self, peer: Peer, message: str, *, give_back: Callable[[str], object] | None = None
    ) -> None:
        super().__init__(False, give_back=give_back)
        self.peer = peer
        self.message = message

    def title_text(self) -> Text:
        return Text("Send this message to another zcoder agent?")

    def meta(self) -> list[Static]:
        p = self.peer
        named = explicit_name(p)
        who = f"{named} ({visible(p.project)})" if named else visible(p.project)
        return [
            Static(
                Text(
                    f"to {who} (pid {p.pid}) · instance {visible(p.instance_id)}\n"
                    f"   {visible(p.workspace)}"
                ),
                classes="meta",
            )
        ]

    def body(self) -> str:
        return self.message

    def keys_text(self) -> str:
        return "[y] send   [N]/Esc/Enter do not send"

    def answer_for(self, key: str) -> bool | None:
        if key == "y":
            return True
        if key in ("n", "enter"):
            return False
        return None
