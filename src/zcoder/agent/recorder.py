"""Where a turn's doings go: events to the front end, records to the session store.

Neither may break a turn: a front end's failing event handler is logged, and a session
that cannot be saved is reported once (an ErrorNotice) and logged each time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from zcoder.agent.events import AgentEvent, AssistantMessage, ErrorNotice, EventSink, Notice
from zcoder.model import Message
from zcoder.sessions import SessionStore, SessionStoreError

log = logging.getLogger(__name__)


class Recorder:
    """The agent's front end (``on_event``) and its session (``store``, ``session_id``)."""

    def __init__(
        self, on_event: EventSink, store: SessionStore | None, session_id: str | None
    ) -> None:
        self.on_event = on_event
        self.store = store
        self.session_id = session_id
        self._store_warned = False

    def emit(self, event: AgentEvent) -> None:
        try:
            self.on_event(event)
        except Exception:  # a front end's bug must not break the turn or its history
            log.exception("event handler failed for %r", event)

    def save(self, action: Callable[[SessionStore, str], Any]) -> Any:
        if self.store is None or self.session_id is None:
            return None
        try:
            return action(self.store, self.session_id)
        except SessionStoreError as exc:
            if not self._store_warned:
                self._store_warned = True
                self.emit(ErrorNotice(f"the session could not be saved: {exc}"))
            log.warning("session not saved: %s", exc)
            return None

    def save_messages(self, messages: Sequence[Message]) -> None:
        saved = list(messages)
        self.save(lambda store, sid: store.replace_messages(sid, saved))

    def event(self, role: Any, text: str, metadata: dict[str, Any] | None = None) -> int | None:
        result = self.save(lambda store, sid: store.append_event(sid, role, text, metadata or {}))
        return result if isinstance(result, int) else None

    def update_event(self, event_id: int | None, text: str, metadata: dict[str, Any]) -> None:
        if event_id is None or self.store is None:
            return
        self.save(lambda store, _sid: store.update_event(event_id, text=text, metadata=metadata))

    def assistant(self, text: str, *, partial: bool = False, streamed: bool = True) -> None:
        """A reply of the model, saved and shown (``partial``: cut off or stopped)."""
        self.event("assistant", text, {"partial": True} if partial else {})
        self.emit(AssistantMessage(text, partial=partial, streamed=streamed))

    def notice(self, text: str, metadata: dict[str, Any] | None = None) -> None:
        """A system notice (a nudge, a hook's word, a compaction report), saved and shown."""
        self.event("system", text, metadata)
        self.emit(Notice(text))

    def error(self, text: str) -> None:
        """An error of the turn, saved and shown."""
        self.event("error", text)
        self.emit(ErrorNotice(text))
