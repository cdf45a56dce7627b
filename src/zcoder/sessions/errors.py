"""Errors of the session store: each says which file and what the user can do."""

from __future__ import annotations

from pathlib import Path

from zcoder.base.errors import ZcoderError


class SessionStoreError(ZcoderError):
    """The session store cannot be used; ``str(error)`` is a message fit for the user."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


class StoreLockedError(SessionStoreError):
    """Another connection held the store longer than the busy timeout."""


class StoreCorruptError(SessionStoreError):
    """The file is not a readable zcoder session store. It is never modified."""


class StoreVersionError(SessionStoreError):
    """The store was written by a newer zcoder whose schema this code does not know."""


class SessionNotFoundError(ZcoderError, LookupError):
    """No session with this id in this workspace and profile."""

    def __init__(self, session_id: str, workspace: str | None = None) -> None:
        where = f" for workspace {workspace}" if workspace is not None else ""
        super().__init__(
            f"No saved session {session_id!r}{where} with this profile. "
            "List the sessions of this workspace with /sessions."
        )
        self.session_id = session_id


class EventNotFoundError(ZcoderError, LookupError):
    """No transcript event with this id."""

    def __init__(self, event_id: int) -> None:
        super().__init__(f"No transcript event with id {event_id} in the session store.")
        self.event_id = event_id
