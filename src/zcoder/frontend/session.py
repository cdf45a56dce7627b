"""Opening a session, written once for every front end: the TUI, ``--prompt`` and ``--acp``.

``open_session`` takes the session's lock (zcoder.sessions.locks) and loads the saved
session (``--resume``, ``/sessions ID``, session/load) or takes the newest empty one no
other zcoder has, else a new one. What it returns holds the lock until the front end lets
the session go, so two front ends never write one session. Then, with the model client:
``OpenedSession.choose_model`` puts back a resumed session's model when the server has it
and records the model the session goes on with; ``size_window`` sizes the context window
before the first request (num_ctx goes with every request: zcoder.model.context); the
TUI, which sizes it again for each model switched to, calls ``resolve_window``.

Errors are the store's and the lock's, for each front end to say its way:
``SessionInUseError`` (another zcoder has it open), ``LookupError``
(``SessionNotFoundError``: no such session in this workspace and profile, or not even the
shape of an id) and ``SessionStoreError``. Nothing stays locked after an error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from zcoder.frontend.resume import lock_resumed, restored_model
from zcoder.model import ModelError
from zcoder.model.context import ContextWindow, resolve_for_model, same_model
from zcoder.sessions import SessionData, SessionStoreError
from zcoder.sessions.locks import LockTaker, SessionInUseError, SessionLock

if TYPE_CHECKING:
    from zcoder.agent import Agent
    from zcoder.config import Config
    from zcoder.model import ModelClient
    from zcoder.sessions import SessionStore

__all__ = [
    "OpenedSession",
    "open_session",
    "resolve_window",
    "restore_saved_model",
    "size_window",
]


@dataclass(eq=False)
class OpenedSession:
    """A session taken by this process: its saved data and its lock (None where no lock
    can be made, or when it is the session the caller had open already)."""

    data: SessionData
    lock: SessionLock | None
    resumed: bool
    """A saved session was asked for by id; False: the newest empty one, or a new one."""
    in_use: list[SessionInUseError] = field(default_factory=list)
    """The empty sessions passed over because another zcoder has them open (not resumed)."""

    @property
    def id(self) -> str:
        return self.data.info.id

    @property
    def saved_model(self) -> str | None:
        """The model a resumed session was saved with (None for a new one)."""
        return self.data.info.model if self.resumed else None

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    async def choose_model(
        self, store: SessionStore, client: ModelClient, current: str, *, keep_model: bool
    ) -> tuple[str, str | None]:
        """The model the session goes on with, and the notice to show (None: nothing to
        say). A resumed session's own model when the server lists it (or cannot be asked),
        unless ``keep_model`` (``-m`` was given). The session is saved with it where the
        store lets it (it goes on with it all the same)."""
        model, notice = current, None
        saved = self.saved_model
        if saved is not None and not keep_model:
            model, notice = await restore_saved_model(client, saved, current)
        with contextlib.suppress(SessionStoreError):
            self.record_model(store, model)
        return model, notice

    def record_model(self, store: SessionStore, model: str) -> None:
        """Save ``model`` as the session's when it is not already; SessionStoreError."""
        if not same_model(self.data.info.model, model):
            store.set_model(self.id, model)


def open_session(
    store: SessionStore,
    config: Config,
    model: str,
    *,
    resume: str | None = None,
    one_shot: bool = False,
    mine: str | None = None,
) -> OpenedSession:
    """Take and load the session ``resume`` of this workspace and profile, or (``resume``
    None) the newest empty one no other zcoder has open, else a new one, with ``model`` and
    ``one_shot`` (made by ``--prompt``). ``mine``: the session the caller has open already
    (no second lock is taken for it; a new session may be it again)."""
    workspace, profile = str(config.workspace), config.profile.value
    if resume is None:
        taker = LockTaker(config.home, mine=mine)
        try:
            info = store.reuse_or_create(workspace, profile, model, take=taker, one_shot=one_shot)
        except BaseException:
            if taker.lock is not None:  # taken inside a transaction that then failed
                taker.lock.release()
            raise
        # Empty by definition (no messages, ledger or events): nothing to read back.
        data = SessionData(info=info, messages=[], user_ledger=[], events=[])
        return OpenedSession(data, taker.lock, resumed=False, in_use=list(taker.in_use))
    lock = None if resume == mine else lock_resumed(config.home, resume)
    try:
        data = store.load(resume, workspace, profile)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    return OpenedSession(data, lock, resumed=True)


async def restore_saved_model(
    client: ModelClient, saved: str, current: str
) -> tuple[str, str | None]:
    """``restored_model`` with what the server lists (None when it cannot be asked: the
    saved model is trusted then)."""
    try:
        available: list[str] | None = await client.list_models()
    except ModelError:
        available = None
    return restored_model(saved, current, available)


async def resolve_window(
    config: Config, model: str, probe: object, warn: Callable[[str], object]
) -> ContextWindow:
    """The context window for ``model`` (the setting, else what ``probe``, the model
    client, finds out: zcoder.model.context); each warning (a bad setting, a server that
    could not be asked) goes to ``warn``."""
    window = await resolve_for_model(
        model, explicit=config.context_window, home=config.home, probe=probe
    )
    for warning in window.warnings:
        warn(warning)
    return window


async def size_window(agent: Agent, config: Config, warn: Callable[[str], object]) -> ContextWindow:
    """Size the agent's context window for its model, before its first request."""
    window = await resolve_window(config, agent.settings.model, agent.client, warn)
    agent.settings.num_ctx = window.tokens
    return window
