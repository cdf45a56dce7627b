"""Sessions in the app: opening the store, the session opened at start (or ``--resume``),
loading one into the agent and the transcript, the sidebar, and starting a new one.

The store lives in ``zcoder.sessions``; this is the one place the app talks to it about
which session is open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zcoder.sessions import SessionStore, SessionStoreError
from zcoder.tui.transcript import entry_for_event

if TYPE_CHECKING:
    from zcoder.tui.app import ZcoderApp


class SessionsUI:
    """Owns the app's SessionStore (``store`` is None when it could not be opened)."""

    def __init__(self, app: ZcoderApp, resume: str | None) -> None:
        self.app = app
        self.resume = resume
        self.store: SessionStore | None = None
        self.session_id: str | None = None

    @property
    def scope(self) -> tuple[str, str]:
        return str(self.app.config.workspace), self.app.config.profile.value

    def open_store(self) -> None:
        app = self.app
        try:
            self.store = SessionStore(app.config.home)
        except SessionStoreError as exc:
            self.store = None
            app.error(f"{exc} — this session will not be saved")
            return
        for warning in self.store.warnings:
            app.notice(warning)

    def open_initial(self) -> None:
        """The session opened at start: ``--resume``'s, or the newest if it is still empty."""
        if self.store is None:
            self.session_id = None
            return
        workspace, profile = self.scope
        try:
            if self.resume:
                self.load(self.resume)
                return
            info = self.store.reuse_or_create(workspace, profile, self.app.model)
        except LookupError:
            self.app.error(
                f"no session {self.resume!r} in this workspace and profile; started a new one"
            )
            info = self.store.reuse_or_create(workspace, profile, self.app.model)
        except SessionStoreError as exc:
            self.app.error(str(exc))
            return
        self.load(info.id)

    def load(self, session_id: str) -> None:
        app = self.app
        assert app.agent is not None and self.store is not None
        data = self.store.load(session_id, *self.scope)
        self.session_id = data.info.id
        app.agent.use_session(data.info.id, data.messages, data.user_ledger)
        app.transcript.clear()
        app.agent_view.reset()
        for event in data.events:
            app.show(entry_for_event(event.role, event.text, event.metadata))
        if app.relay is not None:
            app.relay.refresh_manifest(session_id=data.info.id)
        self.refresh()
        app.refresh_meter()

    def refresh(self) -> None:
        """The sidebar: this workspace's and profile's sessions, newest first."""
        if self.store is None:
            return
        try:
            sessions = self.store.list_sessions(*self.scope)
        except SessionStoreError as exc:
            self.app.error(str(exc))
            return
        self.app.sidebar.show(sessions, self.session_id)

    def new_session(self) -> None:
        app = self.app
        if app.busy:
            app.notice("Switching sessions is possible when no turn is running.")
            return
        if self.store is None:
            app.error("sessions are unavailable in this run")
            return
        info = self.store.reuse_or_create(*self.scope, app.model)
        if info.id == self.session_id:
            app.notice("This session is already new.")
            return
        self.load(info.id)
        app.notice("New session.")

    def switch_to(self, session_id: str) -> None:
        """The user picked a session in the sidebar."""
        app = self.app
        if session_id == self.session_id:
            return
        if app.busy:
            app.notice("Switching sessions is possible when no turn is running.")
            return
        self.load(session_id)
        app.prompt_input.focus()

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
