"""Leaving with relayed messages still queued: nothing accepted is dropped without a word.

Quitting (Ctrl+Q, /quit, Ctrl+C when idle) while accepted relayed messages wait (queued or
held) first asks, naming how many and from whom. Leaving then discards them: each sender
gets a ``discarded`` receipt and the history says so. Staying keeps them, to run as usual.
A SIGTERM or SIGHUP does not ask (nobody may be there to answer); their senders are told
all the same, as far as the time allows.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.relay import Envelope, sender_from
from zcoder.slash.declared import QuitCommands
from zcoder.tui.dialogs.guarded import GuardedDialog
from zcoder.tui.parts.services import Part

if TYPE_CHECKING:
    from zcoder.frontend.relay_inbox import RelayHistory


class QuitScreen(GuardedDialog[bool]):
    """y leaves (the queued messages are discarded, their senders told); n/Esc stays."""

    def __init__(self, messages: list[Envelope]) -> None:
        super().__init__(False)
        self.messages = messages

    def title_text(self) -> Text:
        count = len(self.messages)
        return Text(f"Quit with {counted(count, 'relayed message')} not yet run?")

    def meta(self) -> list[Static]:
        # Named as everywhere else (zcoder.relay.display): "from api (pid 4242, /src/api)"
        # or "via zcoder send, pid 4242, from /home/me", never by a directory's name alone.
        senders = collections.Counter(visible(sender_from(m)) for m in self.messages)
        who = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in senders.items())
        return [
            Static(
                Text(f"{who}; quitting discards them and tells their senders"),
                classes="meta",
            )
        ]

    def body(self) -> str:
        lines = []
        for message in self.messages:
            preview = " ".join(message.body.split())
            preview = preview[:100] + ("…" if len(preview) > 100 else "")
            lines.append(f"{sender_from(message)}: {preview}")
        return "\n".join(lines)

    def keys_text(self) -> str:
        return "[y] quit and discard them   [n]/Esc stay"

    def answer_for(self, key: str) -> bool | None:
        if key == "y":
            return True
        if key == "n":
            return False
        return None


@dataclass(eq=False)
class QuitUI(Part, QuitCommands):
    """Quitting: at once, or after asking (its host shows the dialog) when relayed
    messages would be dropped.

    It takes, besides its context, never the app: ``history`` (the inbox's relay history,
    which knows the messages not run yet; None while there is no relay) and ``exit`` (the
    app's)."""

    _: KW_ONLY
    history: Callable[[], RelayHistory | None]
    exit: Callable[[int], object]
    _asking: bool = field(default=False, init=False)

    def unrun(self) -> list[Envelope]:
        history = self.history()
        return [] if history is None else history.unrun()

    def quit_command(self, _argument: str) -> None:
        self.request(0)

    def request(self, status: int = 0) -> None:
        """Quit, asking first when relayed messages would be dropped."""
        waiting = self.unrun()
        if not waiting:
            self.exit(status)
            return
        if self._asking:
            return
        self._asking = True

        def answered(leave: bool | None) -> None:
            self._asking = False
            if leave:
                self.discard_all()
                self.exit(status)
            else:
                self.say.notice("Staying: the queued relayed messages will run.")

        self.host.ask(QuitScreen(waiting), answered)

    def discard_all(self) -> int:
        """Tell the senders of every unrun message that it was discarded; how many."""
        history = self.history()
        return 0 if history is None else history.discard_unrun()
