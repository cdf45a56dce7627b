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

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
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
    from zcoder.sessions.titles import (
        DEFAULT_TITLE,
        MAX_TITLE_CHARS,
        UNTITLED,
        shown_title,
        title_from_user_message,
    )

# The names above are the whole face: each is imported from its module when first
# used (zcoder.base.lazy), so a caller that needs one light name does not pay for the
# whole package at start-up.
__getattr__, __dir__, __all__ = face(__name__, __file__)
