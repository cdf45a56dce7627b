"""ACP's ``session/list``: the saved sessions of a workspace, for an editor's history and
for ``/sessions`` over ``zcoder --connect``.

A session is listed in the scope it is stored in, the workspace and the profile, newest
first, as ``zcoder --resume`` lists them. ACP's fields carry the id, the workspace, the
title and the last activity; what a zcoder client shows besides (the model, how many
messages, whether a ``--prompt`` run made it) travels in ``_meta.zcoder``, which other
editors ignore. The cursor is an offset into the list, opaque to the client.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from acp import RequestError
from acp.schema import ListSessionsResponse, SessionInfo

from zcoder.config import Config
from zcoder.sessions import SessionInfo as SavedSession
from zcoder.sessions import SessionStore, SessionStoreError

__all__ = ["PAGE", "list_page", "saved_session"]

PAGE: Final = 100
"""Sessions in one response; ``nextCursor`` asks for the next ones."""


def list_page(store: SessionStore, config: Config, cursor: str | None) -> ListSessionsResponse:
    """One page of ``config``'s workspace's and profile's sessions, newest first."""
    start = _offset(cursor)
    workspace, profile = str(config.workspace), config.profile.value
    try:
        every = store.list_sessions(workspace, profile)
        counts = store.message_counts(workspace, profile)
    except SessionStoreError as exc:
        raise RequestError.internal_error({"details": str(exc)}) from None
    page = every[start : start + PAGE]
    more = start + PAGE < len(every)
    return ListSessionsResponse(
        sessions=[_listed(info, counts.get(info.id, 0)) for info in page],
        next_cursor=str(start + PAGE) if more else None,
    )


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise RequestError.invalid_params({"details": f"not a cursor of session/list: {cursor!r}"})
    return int(cursor)


def _listed(info: SavedSession, messages: int) -> SessionInfo:
    return SessionInfo(
        session_id=info.id,
        cwd=info.workspace,
        title=info.title or None,
        updated_at=datetime.fromtimestamp(info.updated_at, UTC).isoformat(),
        field_meta={
            "zcoder": {
                "model": info.model,
                "profile": info.profile,
                "messages": messages,
                "oneShot": info.one_shot,
                "createdAt": info.created_at,
            }
        },
    )


def saved_session(listed: SessionInfo) -> tuple[SavedSession, int]:
    """A listed session as zcoder's own record (for ``session_lines``), and its message
    count; what another agent leaves out reads as unknown."""
    meta: dict[str, Any] = (listed.field_meta or {}).get("zcoder") or {}
    updated = _timestamp(listed.updated_at)
    info = SavedSession(
        id=listed.session_id,
        workspace=listed.cwd,
        profile=str(meta.get("profile", "")),
        model=str(meta.get("model", "")),
        title=listed.title or "",
        created_at=_number(meta.get("createdAt"), updated),
        updated_at=updated,
        one_shot=meta.get("oneShot") is True,
    )
    return info, int(_number(meta.get("messages"), 0))


def _timestamp(text: str | None) -> float:
    if not text:
        return 0.0
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return 0.0


def _number(value: object, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)
