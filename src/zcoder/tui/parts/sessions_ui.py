"""Sessions in the app: opening the store, the session opened at start (or ``--resume``),
loading one into the agent and the transcript, the sidebar, ``/sessions``, starting a new
one, the session's lock and model, and the exit hint.

The store lives in ``zcoder.sessions``; this is the one place the app talks to it about
which session is open; it opens one as every front end does (zcoder.frontend.session).
The open session is locked (zcoder.sessions.locks) for as long as it is open here, so
another zcoder never opens it silently: at start it takes another session and says why;
picking a session open elsewhere in the sidebar says so and stays put.

It takes the services it uses (the store and the open session are ``Services``'), the
widgets that show sessions (the transcript, the list, the agent's view) and a ``Say``,
never the app. A session opened goes to the relay's manifest at once, and is posted
(``SessionOpened``): the screen measures the context meter once its entries are shown.
"""

from __future__ import annotations

import logging
from dataclasses import KW_ONLY, dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from zcoder.agent import Status
from zcoder.base.plural import counted, plural
from zcoder.frontend.resume import ResumeError, find_session, session_lines
from zcoder.frontend.session import OpenedSession, open_session, restore_saved_model
from zcoder.sessions import SessionData, SessionInfo, SessionStore, SessionStoreError
from zcoder.sessions.locks import SessionInUseError, SessionLock
from zcoder.slash.declared import SessionCommands
from zcoder.tui.messages import SessionOpened
from zcoder.tui.parts.services import Part

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.widget import AwaitMount

    from zcoder.tui.parts.agent_view import AgentView
    from zcoder.tui.parts.model_ui import ModelUI
    from zcoder.tui.widgets.shared import SessionList
    from zcoder.tui.widgets.transcript import Transcript

log = logging.getLogger(__name__)


@dataclass(eq=False)
class SessionsUI(Part, SessionCommands):
    """Opens and closes the SessionStore (``Services.store``, None when it could not be
    opened) and the session open here (``Services.session_id``).

    ``keep_model``: the model was chosen on the command line (``-m``), so resuming does not
    put back the session's own. ``show_list`` shows the sessions list where it fits;
    ``focus_prompt`` gives the prompt the focus.
    """

    _: KW_ONLY
    model: ModelUI
    transcript: Transcript
    sidebar: SessionList
    agent_view: AgentView
    show_list: Callable[[], object]
    focus_prompt: Callable[[], object]
    resume: str | None
    keep_model: bool = False
    lock: SessionLock | None = field(default=None, init=False)
    restoring_model: bool = field(default=False, init=False)
    """True while the resumed session's model is being checked (the warm-up waits)."""
    shown: AwaitMount | None = field(default=None, init=False)
    """The mounting of the loaded session's entries (the meter waits for it)."""
    exit_session: str | None = field(default=None, init=False)
    """Set on close: the session to name in the exit hint (None when it is empty)."""
    show_one_shot: bool = field(default=False, init=False)
    """Whether the list shows the sessions of ``--prompt`` runs (``/sessions all``)."""

    @property
    def scope(self) -> tuple[str, str]:
        config = self.services.config
        return str(config.workspace), config.profile.value

    def open_store(self) -> None:
        try:
            self.services.store = SessionStore(self.services.config.home)
        except SessionStoreError as exc:
            self.services.store = None
            self.say.error(f"{exc} — this session will not be saved")
            return
        for warning in self.services.store.warnings:
            self.say.notice(warning)

    def open_initial(self) -> None:
        """The session opened at start: ``--resume``'s, or the newest if it is still empty.

        A session open in another zcoder is not opened: a new one is, and the user is told.
        """
        if self.services.store is None:
            self.services.session_id = None
            if self.services.agent is not None:  # no sessions kept: a session all the same
                self.services.agent.hook_points.start_session("startup")
            return
        why = ""
        try:
            if self.resume:
                try:
                    self.load(self.resume, restore_model=not self.keep_model)
                    return
                except SessionInUseError as exc:
                    why = (
                        f"{exc}, so this zcoder opened a new session; continue that one there "
                        "(or leave it there, then resume it here)"
                    )
                except LookupError:
                    why = (
                        f"no session {self.resume!r} in this workspace and profile; "
                        "started a new one"
                    )
            self._open_fresh(announce=True)
        except SessionStoreError as exc:
            self.say.error(str(exc))
        if why:  # after the load, which clears the transcript
            self.say.error(why)

    def _open_fresh(self, *, announce: bool, source: str = "startup") -> bool:
        """Open the newest empty session no other zcoder has, else a new one; False when
        that is the session already open here."""
        assert self.services.store is not None
        opened = open_session(
            self.services.store,
            self.services.config,
            self.services.model,
            mine=self.services.session_id,
        )
        if opened.id == self.services.session_id:
            return False
        self._load_opened(opened, restore_model=False, source=source)
        if announce:
            for busy in opened.in_use[:1]:
                said = str(busy)
                self.say.notice(f"{said[:1].upper()}{said[1:]}; this zcoder opened {opened.id}.")
        return True

    def load(self, session_id: str, *, restore_model: bool = True) -> None:
        """Open ``session_id`` here. Raises SessionInUseError when another zcoder has it,
        LookupError when this scope has no such session."""
        assert self.services.store is not None
        opened = open_session(
            self.services.store,
            self.services.config,
            self.services.model,
            resume=session_id,
            mine=self.services.session_id,
        )
        self._load_opened(opened, restore_model=restore_model)

    def _load_opened(
        self,
        opened: OpenedSession,
        *,
        restore_model: bool,
        source: str = "resume",  # for SessionStart hooks: startup, resume or clear
    ) -> None:
        agent, model = self.services.agent, self.services.model
        assert agent is not None and self.services.store is not None
        data = opened.data
        initial = self.services.session_id is None
        if opened.lock is not None or data.info.id != self.services.session_id:
            if self.lock is not None:
                self.lock.release()
            self.lock = opened.lock
        self.services.session_id = data.info.id
        # The waiting input is the session's: what waited stays saved with the one left;
        # this one's comes back held (after a crash too): nothing runs until /queue resume.
        store = self.services.store
        self.services.pending.switch(partial(store.replace_pending, data.info.id), data.pending)
        goal_note = self.services.goal.switch(store.save_state, data.info.id, data.state)
        agent.use_session(data.info.id, data.messages, data.user_ledger, data.state)
        agent.hook_points.start_session(source)
        self._show(data)
        if not initial:  # the badge said how the last session's turn ended (Stopped…)
            self.say.header(status=Status.READY.value, idle_only=True)
        if self.services.relay is not None:  # peers see it at once
            self.services.relay.refresh_manifest(session_id=data.info.id)
        self.refresh()
        self.say.post(SessionOpened(data.info.id, self.shown))  # the context meter
        if waiting := len(data.pending):
            them = "it" if waiting == 1 else "them"
            self.say.notice(
                f"{counted(waiting, 'input')} {'was' if waiting == 1 else 'were'} waiting when"
                f" this session last ran: /queue lists {them}, /queue resume runs {them}."
            )
        if goal_note:
            self.say.notice(goal_note)
        if not restore_model:
            try:  # the session goes on with this model (-m, or a new session's)
                opened.record_model(self.services.store, model)
            except SessionStoreError as exc:
                self.say.error(str(exc))
        if restore_model:
            self.restoring_model = True
            self.host.run_later(
                partial(self._restore_model, data.info.model, warm_if_kept=initial),
                group="session-model",
            )

    def _show(self, data: SessionData) -> None:
        """The session's saved transcript, in place of what was shown."""
        self.transcript.clear()
        self.agent_view.reset()
        self.shown = self.transcript.show_saved([(e.role, e.text, e.metadata) for e in data.events])

    def show_again(self) -> None:
        """The open session's transcript as it is saved now (after a /rewind)."""
        store, session_id = self.services.store, self.services.session_id
        if store is None or session_id is None:
            return
        try:
            data = store.load(session_id, *self.scope)
        except (LookupError, SessionStoreError) as exc:
            self.say.error(str(exc))
            return
        self._show(data)
        self.say.post(SessionOpened(data.info.id, self.shown))  # the context meter

    async def _restore_model(self, session_model: str, *, warm_if_kept: bool) -> None:
        """Put back the session's model when the server has it; else say so and keep ours.
        At start the warm-up waits for this (it would load the wrong model otherwise)."""
        services = self.services
        try:
            # The server not reachable: what was saved is trusted (zcoder.frontend.session).
            model, notice = await restore_saved_model(
                services.client, session_model, services.model
            )
            if model != services.model:
                self.model.set_model(model, notice=notice)  # warms the model up
            else:
                if notice is not None:
                    self.say.notice(notice)
                if warm_if_kept:
                    self.model.start_warmup()
        finally:
            self.restoring_model = False

    def _listed(self, sessions: list[SessionInfo]) -> list[SessionInfo]:
        """The sessions the list shows: ``--prompt`` runs' only with ``/sessions all``
        (and the open one always)."""
        return [
            info
            for info in sessions
            if self.show_one_shot or not info.one_shot or info.id == self.services.session_id
        ]

    def refresh(self) -> None:
        """The sidebar: this workspace's and profile's sessions, newest first."""
        if self.services.store is None:
            return
        try:
            sessions = self.services.store.list_sessions(*self.scope)
        except SessionStoreError as exc:
            self.say.error(str(exc))
            return
        self.sidebar.show(self._listed(sessions), self.services.session_id)

    def listing(self) -> str:
        """``/sessions`` in the transcript: id, age, model, messages and title of each."""
        if self.services.store is None:
            return "Sessions are unavailable in this run."
        workspace, profile = self.scope
        try:
            every = self.services.store.list_sessions(workspace, profile)
            counts = self.services.store.message_counts(workspace, profile)
        except SessionStoreError as exc:
            return str(exc)
        sessions = self._listed(every)
        lines = [
            f"Sessions of {workspace} ({profile}), newest first; ● is this one. "
            "/sessions ID opens one (a unique prefix of the id is enough), and so does a "
            "click in the list (Ctrl+B shows or hides it); later: zcoder --resume ID."
        ]
        lines += session_lines(sessions, counts=counts, current=self.services.session_id)
        hidden = len(every) - len(sessions)
        if hidden:
            lines.append(
                f"{counted(hidden, 'session')} of --prompt runs "
                f"{plural(hidden, 'is', 'are')} not shown: /sessions all"
            )
        return "\n".join(lines)

    def new_command(self, _argument: str) -> None:
        self.new_session()

    def sessions_command(self, argument: str) -> None:
        typed = argument.strip()
        if typed.lower() not in ("", "all"):
            self.open_typed(typed)
            return
        self.show_one_shot = typed.lower() == "all"
        self.refresh()
        self.say.notice(self.listing())
        self.show_list()

    def open_typed(self, typed: str) -> None:
        """``/sessions ID``: open the session of this workspace and profile that ``typed``
        (an id or a unique prefix of one) names."""
        if self.services.store is None:
            self.say.error("sessions are unavailable in this run")
            return
        try:
            found = find_session(self.services.store, typed, *self.scope)
        except (ResumeError, SessionStoreError) as exc:
            self.say.error(str(exc))
            return
        if found.id == self.services.session_id:
            self.say.notice(f"{found.id} is the session open here.")
            return
        self.switch_to(found.id)

    def _busy(self) -> bool:
        """Whether a turn runs, said when it does (the session stays)."""
        if not self.services.busy():
            return False
        said = "Switching sessions is possible when no turn is running."
        if (goal := self.services.goal.goal) is not None and goal.running:
            said += " The goal runs turn after turn: Escape or /goal pause stops it first."
        self.say.notice(said)
        return True

    def new_session(self) -> None:
        if self._busy():
            return
        if self.services.store is None:
            self.say.error("sessions are unavailable in this run")
            return
        try:
            opened = self._open_fresh(announce=False, source="clear")
        except SessionStoreError as exc:
            self.say.error(str(exc))
            return
        if not opened:
            self.say.notice("This session is already new.")
            return
        self.say.notice("New session.")

    def switch_to(self, session_id: str) -> None:
        """The user picked a session in the sidebar."""
        if session_id == self.services.session_id:
            return
        if self._busy():
            return
        self.open_picked(session_id)

    def open_picked(self, session_id: str) -> None:
        """Open the session picked in the sidebar, at a moment a switch is allowed."""
        try:
            self.load(session_id)
        except SessionInUseError as exc:
            self.say.error(f"{exc}; continue it there. This one stays open here.")
            self.refresh()
            return
        except (LookupError, SessionStoreError) as exc:
            self.say.error(str(exc))
            return
        self.focus_prompt()

    def last_reply(self) -> str | None:
        """The last assistant reply of the open session, as the model wrote it."""
        if self.services.store is not None and self.services.session_id is not None:
            try:
                return self.services.store.last_event_text(self.services.session_id, "assistant")
            except SessionStoreError as exc:
                self.say.error(str(exc))
                return None
        agent = self.services.agent
        for message in reversed(agent.messages if agent is not None else []):
            if message.get("role") == "assistant" and str(message.get("content") or "").strip():
                return str(message["content"])
        return None

    def close(self) -> None:
        """At exit: note the session for the exit hint, release its lock, close the store."""
        if self.services.store is not None:
            if self.services.session_id is not None:
                try:
                    if self.services.store.has_content(self.services.session_id):
                        self.exit_session = self.services.session_id
                except SessionStoreError:
                    log.warning(
                        "cannot read session %s at exit", self.services.session_id, exc_info=True
                    )
            self.services.store.close()
            self.services.store = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None
