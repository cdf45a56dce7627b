"""Telling the model which other agents share its workspace, without touching its prompt.

The system prompt stays the same for a whole session (a server's prompt cache reuses a
request's beginning only while it is byte for byte the same: docs/models.md), so a change
in who works beside the agent goes at the end of the history, as a note before the next
turn: once per change, again when the note was compacted away or another session opened.
"""

from __future__ import annotations

from dataclasses import dataclass

from zcoder.agent.prompts import peers_note
from zcoder.model import Message, user_message


@dataclass
class PeersNote:
    told: str = ""  # what the last note said ("": no other agent)
    message: Message | None = None  # that note, while it is in the history

    def tell(self, messages: list[Message], peers: str) -> None:
        """Append a note to ``messages`` if ``peers`` differs from what they were told."""
        told = self.told if any(m is self.message for m in messages) else ""
        if peers == told:
            return
        note = user_message(peers_note(peers))
        messages.append(note)
        self.told, self.message = peers, note
