"""The dialogs where a person decides on a command or a message: run_command's approval
(``ApprovalScreen``), an MCP tool call's (``McpApprovalScreen``), fetch_url's
(``WebApprovalScreen``: the URL, and ``a`` for its host only) and the confirmation of a
relayed send (``ConfirmSendScreen``).

Neither starting a project's MCP server nor an MCP tool call is a shell command, and
their dialogs say so (``McpStartScreen``, ``McpApprovalScreen``; ``approval_screen``
picks the one a request needs). An MCP tool call's dialog names the server and the
tool, shows the whole arguments, and shows the server's description of the tool as the
server's words (a server may write "ignore previous instructions" there; the user sees it
for what it is).

Both are ``GuardedDialog``s (tui/dialogs/guarded.py): what is approved is what was seen, and keys
meant for something else cannot answer them. The edit and /undo dialogs are in
tui/dialogs/edit.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar, Final, Generic, TypeVar

from rich.text import Text
from textual.widgets import Static

from zcoder.base.sanitize import visible
from zcoder.relay import Peer, paused_warning, peer_label, steer_note
from zcoder.tools import ApprovalDecision, CommandApprovalRequest, EditApprovalRequest
from zcoder.tools.approval import McpServerStart, McpToolCall
from zcoder.tui.dialogs.guarded import GuardedDialog, YesNoDialog
from zcoder.tui.widgets.shared import content_text, screen_safe


@dataclass(frozen=True)
class DecisionKeys:
    """What y, a and n do in an approval dialog, and its keys line in the dialog's words.

    y says yes once; a is the grant the dialog offers (the rest of the process's commands,
    the rest of the turn's edits) and, in a relayed task's dialog, which never offers one,
    a yes to this one only (the seed's rule); n (and Escape) says no.
    """

    yes: str  # y where nothing else is offered
    once: str  # y beside the grant
    grant: str  # a
    this_one: str  # y or a in a relayed task's dialog
    no: str

    def line(self, *, grant_offered: bool, relayed: bool) -> str:
        if grant_offered:
            return f"[y] {self.once}   [a] {self.grant}   [n]/Esc {self.no}"
        if relayed:
            return f"[y]/[a] {self.this_one}   [n]/Esc {self.no}   (a relayed task asks each time)"
        return f"[y] {self.yes}   [n]/Esc {self.no}"

    @staticmethod
    def answer(key: str, *, grant_offered: bool, relayed: bool) -> ApprovalDecision | None:
        if key == "y":
            return ApprovalDecision.ONCE
        if key == "a":
            if grant_offered:
                return ApprovalDecision.ALWAYS
            return ApprovalDecision.ONCE if relayed else None
        if key == "n":
            return ApprovalDecision.DENY
        return None


R = TypeVar("R", CommandApprovalRequest, EditApprovalRequest)


class DecisionDialog(GuardedDialog[ApprovalDecision], Generic[R]):
    """An approval dialog about a ``request``: its keys are ``KEYS`` (DecisionKeys), the
    grant offered is the subclass's ``grant_offered``, and a relayed task's request says
    so in the title."""

    KEYS: ClassVar[DecisionKeys]

    def __init__(self, request: R, *, give_back: Callable[[str], object] | None = None) -> None:
        super().__init__(ApprovalDecision.DENY, give_back=give_back)
        self.request: R = request

    @property
    def grant_offered(self) -> bool:
        raise NotImplementedError

    def titled(self, title: str) -> Text:
        """``title``, naming the relayed task's sender when a relayed task asks."""
        sender = self.request.requested_by
        if sender:
            return Text(f"{title} — asked by a task relayed {visible(sender)}")
        return Text(title)

    def keys_text(self) -> str:
        relayed = self.request.requested_by is not None
        return self.KEYS.line(grant_offered=self.grant_offered, relayed=relayed)

    def answer_for(self, key: str) -> ApprovalDecision | None:
        relayed = self.request.requested_by is not None
        return self.KEYS.answer(key, grant_offered=self.grant_offered, relayed=relayed)


BACKGROUND: Final = "keeps running in the background until /jobs stop or zcoder exits"
REFUSED_KEYS: Final = "[y] run it anyway, this once   [n]/Esc deny   (no [a]: asked every time)"


class ApprovalScreen(DecisionDialog[CommandApprovalRequest]):
    """run_command approval: y once, a for the rest of the process (when offered), n/Esc.
    The grant is process-wide; in sysadmin ``a`` is not an answer at all. A command the
    guard refuses (``request.refused``, coding profile) says so in its title and shows
    the guard's reason; there ``a`` is no answer, even in a relayed task's dialog."""

    KEYS = DecisionKeys(
        yes="run this command",
        once="run once",
        grant="allow commands for this process",
        this_one="run this one command",
        no="deny",
    )

    @property
    def grant_offered(self) -> bool:
        return self.request.allow_always

    def title_text(self) -> Text:
        if self.request.refused:
            return self.titled("The safety guard refuses this command. Run it anyway?")
        if self.request.background:
            return self.titled("Run this command in the background?")
        return self.titled("Run this command?")

    def keys_text(self) -> str:
        return REFUSED_KEYS if self.request.refused else super().keys_text()

    def answer_for(self, key: str) -> ApprovalDecision | None:
        if self.request.refused and key == "a":
            return None
        return super().answer_for(key)

    def meta(self) -> list[Static]:
        r = self.request
        widgets = [
            Static(
                Text(
                    f"in {screen_safe(str(r.cwd))} · "
                    + (BACKGROUND if r.background else f"timeout {r.timeout_seconds:g} s")
                    + f" · {r.profile.value}"
                ),
                classes="meta",
            )
        ]
        if r.warning:  # over --connect, an MCP tool's description too: markers for padding
            said = "refused by the safety guard" if r.refused else "warning"
            widgets.append(Static(content_text(r.warning, f"{said}: "), classes="warning"))
        return widgets

    def body(self) -> str:
        return self.request.command

    def body_prefix(self) -> str:
        return "$ "


def approval_screen(
    request: CommandApprovalRequest, give_back: Callable[[str], object] | None = None
) -> ApprovalScreen:
    """The dialog for ``request``: a command's, an MCP tool call's, or an MCP server's start."""
    if isinstance(request.mcp, McpToolCall):
        return McpApprovalScreen(request, give_back=give_back)
    if isinstance(request.mcp, McpServerStart):
        return McpStartScreen(request, give_back=give_back)
    if request.web_host is not None:
        return WebApprovalScreen(request, give_back=give_back)
    if request.helper is not None:
        return HelperApprovalScreen(request, give_back=give_back)
    return ApprovalScreen(request, give_back=give_back)


class WebApprovalScreen(ApprovalScreen):
    """fetch_url's approval: the URL; y fetches it, a (where offered) fetches it and the
    rest of this run's pages of its host, never other hosts, n/Esc refuses."""

    KEYS = replace(ApprovalScreen.KEYS, yes="fetch it", once="fetch once", this_one="fetch it")

    def title_text(self) -> Text:
        return self.titled("Fetch this web page?")

    def keys_text(self) -> str:
        host = visible(self.request.web_host or "")
        keys = replace(self.KEYS, grant=f"allow {host} for this run")
        relayed = self.request.requested_by is not None
        return keys.line(grant_offered=self.grant_offered, relayed=relayed)

    def meta(self) -> list[Static]:
        r = self.request
        widgets = [
            Static(
                Text(f"host {visible(r.web_host or '')} · timeout {r.timeout_seconds:g} s"),
                classes="meta",
            )
        ]
        if r.warning:
            widgets.append(Static(content_text(r.warning, "note: "), classes="warning"))
        return widgets

    def body_prefix(self) -> str:
        return ""


class HelperApprovalScreen(ApprovalScreen):
    """Handing a task to another coding agent: its exact command line and that it runs with
    its own permissions; y starts it, n/Esc does not. Asked every time: no ``a``, in any
    dialog, relayed or not."""

    KEYS = replace(ApprovalScreen.KEYS, yes="start it", this_one="start it")

    def title_text(self) -> Text:
        return self.titled(f"Hand this task to {visible(self.request.helper or '')}?")

    def keys_text(self) -> str:
        return f"[y] {self.KEYS.yes}   [n]/Esc {self.KEYS.no}   (asked every time)"

    def answer_for(self, key: str) -> ApprovalDecision | None:
        return None if key == "a" else super().answer_for(key)

    def meta(self) -> list[Static]:
        r = self.request
        return [
            Static(
                Text(f"in {screen_safe(str(r.cwd))} · time limit {r.timeout_seconds:g} s"),
                classes="meta",
            ),
            Static(content_text(r.warning or "", "note: "), classes="warning"),
        ]


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
        said = [
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
        if s.variables:
            said.append(Static(Text(screen_safe(s.variables)), classes="warning"))
        if s.replaces:
            said.append(
                Static(
                    Text(f"it replaces your own server of that name: {screen_safe(s.replaces)}"),
                    classes="warning",
                )
            )
        return said

    def body(self) -> str:
        return f"{self.start.program}\n\nits whole entry:\n{self.start.entry}"

    def body_prefix(self) -> str:
        return ""

    def keys_text(self) -> str:
        return "[y] allow and start it   [n]/Esc refuse"


class McpApprovalScreen(ApprovalScreen):
    """An MCP tool call's approval: y runs this one call, n/Esc denies it (``a`` is never
    offered: each call that may change something asks)."""

    KEYS = replace(ApprovalScreen.KEYS, yes="run this call", this_one="run this one call")

    @property
    def call(self) -> McpToolCall:
        assert isinstance(self.request.mcp, McpToolCall)
        return self.request.mcp

    def title_text(self) -> Text:
        call = self.call
        return self.titled(
            f"Run the MCP tool {visible(call.tool)} of the server {visible(call.server)}?"
        )

    def meta(self) -> list[Static]:
        c, r = self.call, self.request
        return [
            Static(
                Text(
                    f"MCP server {screen_safe(c.server)} · tool {screen_safe(c.tool)}"
                    f" · timeout {r.timeout_seconds:g} s · {r.profile.value}"
                ),
                classes="meta",
            )
        ]

    # The server's description follows the arguments in the content, which scrolls and must
    # be seen whole: however long (or padded) it is, it cannot push the arguments or the
    # keys out of the dialog.
    DESCRIBED: ClassVar[str] = "the server's description of this tool (its words, not yours): "

    def body(self) -> str:
        return f"{self.call.arguments}\n\n{self.DESCRIBED}{self.call.description}"

    def body_renderable(self) -> Text:
        described = content_text(self.call.description, self.DESCRIBED)
        described.stylize("bold red")
        return Text.assemble(content_text(self.call.arguments), "\n\n", described)

    def body_prefix(self) -> str:
        return ""


class ConfirmSendScreen(YesNoDialog):
    """y/N before every send_agent_message delivery, with the exact target and message."""

    def __init__(
        self,
        peer: Peer,
        message: str,
        *,
        steer: bool = False,
        give_back: Callable[[str], object] | None = None,
    ) -> None:
        super().__init__(give_back=give_back)
        self.peer = peer
        self.message = message
        self.steer = steer

    def title_text(self) -> Text:
        return Text("Send this message to another zcoder agent?")

    def meta(self) -> list[Static]:
        p = self.peer
        widgets = [
            Static(
                Text(
                    f"to {peer_label(p)} (pid {p.pid}) · instance {visible(p.instance_id)}\n"
                    f"   {visible(p.workspace)}"
                ),
                classes="meta",
            )
        ]
        if self.steer:
            widgets.append(Static(Text(steer_note(p)), classes="meta"))
        if warning := paused_warning(p):
            widgets.append(Static(Text(f"warning: {warning}"), classes="warning"))
        return widgets

    def body(self) -> str:
        return self.message

    def keys_text(self) -> str:
        return "[y] send   [N]/Esc/Enter do not send"
