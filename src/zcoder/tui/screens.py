"""Modal dialogs: command approval, send confirmation, model picker.

Every dialog answers through ``dismiss``; Escape is always the safe answer (deny, do not
send, keep the model).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static

from zcoder.relay import Peer
from zcoder.relay.display import visible
from zcoder.tools import ApprovalDecision, CommandApprovalRequest
from zcoder.tui.widgets import screen_safe

DIALOG_CSS = """
ApprovalScreen, ConfirmSendScreen, ModelPicker { align: center middle; }
.dialog { width: 90%; max-width: 110; height: auto; max-height: 90%;
          border: thick $warning; background: $panel; padding: 1 2; }
.dialog .title { text-style: bold; margin-bottom: 1; }
.dialog .command { background: $boost; padding: 0 1; margin-bottom: 1; }
.dialog .keys { color: $text-muted; }
"""

# Smaller than this, a dialog cannot show its command and keys: it denies instead.
MIN_DIALOG_WIDTH = 40
MIN_DIALOG_HEIGHT = 10


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    """run_command approval: y once, a for the rest of the process (when offered), n/Esc."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('once')", "Yes, once"),
        Binding("a", "answer('always')", "Allow all", show=False),
        Binding("n", "answer('deny')", "No"),
        Binding("escape", "answer('deny')", "Deny"),
    ]

    def __init__(self, request: CommandApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        r = self.request
        keys = "[y] run once   [a] allow commands for this process   [n]/Esc deny"
        if not r.allow_always:
            keys = "[y] run this command   [n]/Esc deny"
            if r.origin.value == "relay":
                keys += "   (relayed task: every command is asked)"
        with Vertical(classes="dialog"):
            yield Static(Text("Run this command?"), classes="title")
            # The exact command, with any control character shown rather than obeyed:
            # an escape sequence must not be able to hide or rewrite what is approved.
            yield Static(Text(f"$ {screen_safe(r.command)}"), classes="command")
            yield Static(
                Text(
                    f"in {screen_safe(str(r.cwd))} · timeout {r.timeout_seconds:g} s"
                    f" · {r.profile.value}"
                )
            )
            if r.warning:
                yield Static(Text(f"warning: {screen_safe(r.warning)}", style="bold red"))
            yield Static(Text(keys), classes="keys")

    def action_answer(self, answer: str) -> None:
        decision = {
            "once": ApprovalDecision.ONCE,
            "always": ApprovalDecision.ALWAYS,
            "deny": ApprovalDecision.DENY,
        }[answer]
        if decision is ApprovalDecision.ALWAYS and not self.request.allow_always:
            return  # `a` is not offered here
        self.dismiss(decision)


class ConfirmSendScreen(ModalScreen[bool]):
    """y/N before every send_agent_message delivery, with the exact target and message."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Send"),
        Binding("n", "answer(False)", "Don't send"),
        Binding("escape", "answer(False)", "Don't send"),
        Binding("enter", "answer(False)", "Don't send", show=False),
    ]

    def __init__(self, peer: Peer, message: str) -> None:
        super().__init__()
        self.peer = peer
        self.message = message

    def compose(self) -> ComposeResult:
        p = self.peer
        with Vertical(classes="dialog"):
            yield Static(Text("Send this message to another zcoder agent?"), classes="title")
            yield Static(
                Text(
                    f"to {visible(p.project)} (pid {p.pid}) · instance {visible(p.instance_id)}\n"
                    f"   {visible(p.workspace)}"
                )
            )
            yield Static(Text(screen_safe(self.message)), classes="command")
            yield Static(Text("[y] send   [N]/Esc do not send"), classes="keys")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class ModelPicker(ModalScreen[str | None]):
    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, models: list[str], current: str) -> None:
        super().__init__()
        self.models = models
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(
                Text("Choose a model (Enter), Esc to keep " + self.current), classes="title"
            )
            # Text, not str: a str prompt is parsed as markup, and names come from Ollama.
            yield OptionList(*(Text(screen_safe(name)) for name in self.models))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.current in self.models:
            options.highlighted = self.models.index(self.current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.models[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
