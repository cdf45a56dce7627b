"""A running command's output: shown while it comes, kept (bounded) when it is stopped.

The command runner (zcoder.tools.command) reports output as it reads it; a ``LiveOutput``
passes each piece to the front end as a ``ToolOutput`` event and keeps the head and tail of
all of it, bounded like any tool result, so that a call stopped while it ran can still tell
the model, the transcript and the saved session what it printed. Every few seconds what
it printed so far is also saved (``save``): if zcoder dies while the command runs, the
reopened session shows the call interrupted with that output.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from zcoder.agent.events import EventSink, ToolOutput
from zcoder.agent.prompts import INTERRUPTED
from zcoder.agent.usage import fit_tool_output
from zcoder.tools.output import HeadTailBuffer

__all__ = ["SAVE_EVERY_SECONDS", "LiveOutput", "interrupted_result"]

SAVE_EVERY_SECONDS: Final = 2.0
"""How often a running command's output so far is saved with its session."""


def interrupted_result(output: str, reason: str = INTERRUPTED) -> str:
    """The result of a call stopped while it ran: what it printed so far, then why it ended
    (on a last line in brackets, like run_command's ``[exit code N]``)."""
    if not output.strip():
        return reason
    return f"{output.rstrip()}\n[{reason}]"


class LiveOutput:
    """One call's (or one user command's) output while it runs."""

    def __init__(
        self,
        call_id: str,
        emit: EventSink,
        max_output: int,
        *,
        window: int | None,
        name: str,
        save: Callable[[str], None] | None = None,
    ) -> None:
        self.call_id = call_id
        self._emit = emit
        self._buffer = HeadTailBuffer(max_output)
        self._window = window
        self._name = name
        self._save = save
        self._saved_at: float | None = None

    def feed(self, text: str) -> None:
        """A piece of output, as read (the runner's ``on_output``)."""
        if not text:
            return
        self._buffer.feed(text.encode("utf-8", errors="replace"))
        now = time.monotonic()
        if self._save is not None and (
            self._saved_at is None or now - self._saved_at >= SAVE_EVERY_SECONDS
        ):
            # Saved before it is shown: output the user saw when zcoder died is in the
            # session they reopen (the first piece always; later ones every few seconds).
            self._saved_at = now
            self._save(self.text())
        self._emit(ToolOutput(self.call_id, text))

    def text(self) -> str:
        """All output so far, head and tail when it was longer than the bound."""
        return self._buffer.text()

    def interrupted(self, reason: str = INTERRUPTED) -> str:
        """The result to record for the call stopped now: its output so far and why."""
        return fit_tool_output(
            interrupted_result(self.text(), reason), window=self._window, name=self._name
        )
