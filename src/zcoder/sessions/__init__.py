"""The session store: saved conversations and transcripts, scoped by workspace and profile.

No UI, model, tools or relay imports: the agent and the TUI call this, never the reverse.

    store = SessionStore(default_home(os.environ))        # any thread may use it
    info = store.reuse_or_create(workspace, "coding", model)
    store.record_user_message(info.id, typed)             # ledger + "user" event + title
    store.append_event(info.id, "relay", text, {"sender": ...})   # never titles
    tool = store.append_event(info.id, "tool", "$ ls", {"status": "running", ...})
    store.update_event(tool, metadata={"status": "completed", ...})
    store.replace_messages(info.id, messages)             # after each turn
    data = store.load(info.id, workspace, "coding")       # dead "running" → "interrupted"

Failures of the file raise SessionStoreError (StoreLockedError, StoreCorruptError,
StoreVersionError) whose message names the file and what to do; an unknown id or one of
another workspace or profile raises SessionNotFoundError.
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
