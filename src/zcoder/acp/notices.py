"""zcoder's notices as ACP session notices, for the clients that take them.

A notice (a nudge, a hook's word, a window that was sized down, an error of the turn) is
not part of the reply. ACP has a ``notice`` session update for exactly this (the Session
Notices RFD, stable since October 2026): ``severity`` (info, warning, error), a ``title``
that stands alone, an optional ``description``; it is a live event, never replayed by
``session/load``. In protocol version 1 a client opts in with
``clientCapabilities.session.notices: {}``; to a client that did not, a notice goes as an
agent message instead (the RFD's fallback, and what ``zcoder --connect`` reads).

The SDK zcoder is built on (agent-client-protocol 0.12) neither keeps that capability
when it parses ``initialize`` nor knows the update, so the transport looks at the
``initialize`` request as it passes (``ClientOffers``) and a notice is written as the JSON
the RFD gives (``notice_message``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from acp import update_agent_message_text
from acp.schema import AgentMessageChunk

from zcoder.base.sanitize import visible, visible_lines

Severity = Literal["info", "warning", "error"]

TITLE_CHARS: Final = 200
"""The longest title: a notice's first line, cut; the whole text is the description."""


@dataclass
class ClientOffers:
    """What the client said it takes, beyond what the SDK keeps (see the module)."""

    notices: bool = False

    def note(self, message: dict[str, Any]) -> None:
        """Read the capabilities of an ``initialize`` request (any other message: nothing)."""
        if message.get("method") != "initialize" or "id" not in message:
            return
        params = message.get("params")
        capabilities = params.get("clientCapabilities") if isinstance(params, dict) else None
        session = capabilities.get("session") if isinstance(capabilities, dict) else None
        self.notices = isinstance(session, dict) and isinstance(session.get("notices"), dict)


@dataclass(frozen=True)
class SessionNotice:
    """A notice of zcoder's, sent as a ``notice`` update or, to a client that does not
    take them, as the agent message ``fallback`` (the form ``zcoder --connect`` reads)."""

    severity: Severity
    text: str

    @property
    def session_update(self) -> str:
        """The update's kind, as the SDK's update models name theirs."""
        return "notice"

    def wire(self) -> dict[str, Any]:
        """The update: the first line the title, the rest the description. Plain text, as
        the RFD asks: controls are made visible."""
        first, _, rest = self.text.strip().partition("\n")
        title = visible(first.strip()) or "zcoder"
        description = rest.strip()
        if len(title) > TITLE_CHARS:
            title = title[: TITLE_CHARS - 1] + "…"
            description = self.text.strip()
        update: dict[str, Any] = {
            "sessionUpdate": "notice",
            "severity": self.severity,
            "title": title,
        }
        if description:
            update["description"] = visible_lines(description)
        return update

    def fallback(self) -> AgentMessageChunk:
        if self.severity == "error":
            return update_agent_message_text(f"\n\n**zcoder: {self.text}**\n\n")
        return update_agent_message_text(f"\n\n_zcoder: {self.text}_\n\n")


def notice_message(session_id: str, notice: SessionNotice) -> dict[str, Any]:
    """The ``session/update`` notification that carries ``notice``."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": notice.wire()},
    }
