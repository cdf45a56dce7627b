"""The session store: saved conversations and transcripts, scoped by workspace and profile.

No UI, model, tools or relay imports: the agent and the TUI call this, never the reverse.
"""

from zcoder.sessions.errors import (
    EventNotFoundError,
    SessionNotFoundError,
    SessionStoreError,
    StoreCorruptError,
    StoreLockedError,
    StoreVersionError,
)
from zcoder.sessions.paths import STORE_FILE_NAME, canonical_workspace, default_home
from zcoder.sessions.records import (
    EVENT_ROLES,
    EventRole,
    Message,
    Metadata,
    SessionData,
    SessionInfo,
    ToolStatus,
    TranscriptEvent,
)
from zcoder.sessions.schema import SCHEMA_VERSION
from zcoder.sessions.store import DEFAULT_BUSY_TIMEOUT_MS, SessionStore
from zcoder.sessions.titles import DEFAULT_TITLE, MAX_TITLE_CHARS, title_from_user_message

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_TITLE",
    "EVENT_ROLES",
    "MAX_TITLE_CHARS",
    "SCHEMA_VERSION",
    "STORE_FILE_NAME",
    "EventNotFoundError",
    "EventRole",
    "Message",
    "Metadata",
    "SessionData",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionStore",
    "SessionStoreError",
    "StoreCorruptError",
    "StoreLockedError",
    "StoreVersionError",
    "ToolStatus",
    "TranscriptEvent",
    "canonical_workspace",
    "default_home",
    "title_from_user_message",
]
