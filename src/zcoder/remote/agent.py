"""The agent of ``zcoder --connect``: a zcoder on another host, reached over SSH and ACP.

``RemoteAgent`` stands where the TUI's ``Agent`` stands: the turn worker calls
``run_user_turn`` on it exactly as on the agent of this process, and its events reach the
TUI through the same sink (the app's AgentView), translated from ACP session updates by
zcoder.remote.events. Its permission requests become the TUI's own approval dialogs
(the app's DialogApprovals), answered here, with the remote's content and options: the
rules themselves (what asks, what ``a`` may mean, a relayed task asking every time) are
the remote zcoder's, which only asks what it would ask its own user.

A dropped connection is never papered over. The turn that was running ends with an
error that says so, the calls that were running are marked interrupted, and the commands
among them are named: the remote zcoder interrupts a command when its connection ends
(its input closes, and it stops the turn as on ``session/cancel``), and nothing here runs
one again. ``reconnect`` opens a new connection and loads the session as the remote host
saved it (``session/load``); a prompt is only ever sent once.

The user's waiting input lives there too, saved with the remote session: ``steer`` sends
Enter's text into the remote's running turn, and ``waiting_input`` and ``input_action``
list, queue, drop and resume what waits there (``_zcoder/input``: zcoder.acp.input).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, InitVar, dataclass, field
from pathlib import Path
from typing import Any, Final

from acp import RequestError, text_block
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    SessionInfo,
    ToolCallUpdate,
)

from zcoder.acp.input import IDLE
from zcoder.agent.events import (
    AgentEvent,
    ErrorNotice,
    Outcome,
    StatusChanged,
    TurnFinished,
    UserCommandFinished,
)
from zcoder.agent.status import Status
from zcoder.base.ssh_target import Target
from zcoder.frontend.pending import InputKind, PendingItem
from zcoder.remote.connection import Connection, ConnectionLost, Handler, RemoteInfo
from zcoder.remote.events import UpdateReader, diff_of, text_of
from zcoder.tools import (
    ApprovalDecision,
    Approver,
    CommandApprovalRequest,
    EditApprovalRequest,
    Profile,
    TurnOrigin,
)

log = logging.getLogger(__name__)

METHOD_NOT_FOUND: Final = -32601
STOP_WAIT_SECONDS: Final = 30.0
"""How long a stopped turn waits for the remote's answer to ``session/cancel``."""

_OUTCOMES: Final = {o.value: o for o in Outcome}
_STOP_REASONS: Final = {"cancelled": Outcome.STOPPED, "max_tokens": Outcome.INCOMPLETE}


@dataclass(eq=False)
class RemoteAgent(Handler):
    target: Target
    env: Mapping[str, str]
    _: KW_ONLY
    on_event: Callable[[AgentEvent], None]
    on_user: InitVar[Callable[[str], None]]
    approver: Approver
    on_dropped: Callable[[str], None]
    reader: UpdateReader = field(init=False)
    connection: Connection | None = field(init=False, default=None)
    session_id: str | None = field(init=False, default=None)
    interrupted: list[str] = field(init=False, default_factory=list)
    """Commands a lost connection interrupted, to name again once reconnected."""
    _asking: set[asyncio.Task[Any]] = field(init=False, default_factory=set)
    _watch: asyncio.Task[None] | None = field(init=False, default=None)
    _closing: bool = field(init=False, default=False)
    _held: list[Any] | None = field(init=False, default=None)
    # MCP servers are the remote zcoder's (started and closed there): none here.
    mcp: None = field(init=False, default=None)

    def mcp_now(self) -> None:
        """No MCP servers here: /mcp says so (the remote zcoder's are its own)."""
        return None

    def __post_init__(self, on_user: Callable[[str], None]) -> None:
        self.reader = UpdateReader(self.on_event, on_user)

    # -- the connection -----------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.connection is not None and not self.connection.dropped.is_set()

    @property
    def workspace(self) -> str:
        return self.connection.workspace if self.connection is not None else ""

    async def open(self) -> RemoteInfo:
        """Connect (ssh, ACP's initialize, ``_zcoder/info``); no session is open yet.
        Raises ConnectionLost. A connection that dropped before is let go first."""
        if self.connection is not None:
            old, self.connection = self.connection, None
            await old.close()
        connection = await Connection.open(self.target, self.env, self)
        self.connection = connection
        self._watch = asyncio.get_running_loop().create_task(self._watch_drop(connection))
        assert connection.info is not None
        return connection.info

    async def open_session(
        self, resume: str | None = None, *, before_replay: Callable[[], None] = lambda: None
    ) -> str:
        """A new session, or ``resume``'s loaded. A loaded session's history (updates sent
        before the answer) is held until the load succeeded, then ``before_replay`` runs
        (the app clears the transcript) and it comes through the sink, as the remote host
        saved it; a load that fails leaves the transcript as it was. Raises
        ConnectionLost or RequestError."""
        connection = self.connection
        if connection is None or not self.connected:
            raise ConnectionLost("not connected")
        self.session_id = resume  # the replay's updates are this session's
        self._held = []
        try:
            self.session_id = await connection.open_session(resume)
        except BaseException:
            self._held = None
            raise
        held, self._held = self._held, None
        if resume is not None:
            self.reader.restart()
            before_replay()
        for update in held:
            self.reader(update)
        self.reader.end_reply()  # a saved session's last reply is whole
        return self.session_id

    async def _watch_drop(self, connection: Connection) -> None:
        await connection.dropped.wait()
        for task in list(self._asking):
            task.cancel()  # a dialog open for the lost connection closes as a refusal
        if not self._closing and connection is self.connection:
            self.on_dropped(connection.why())

    def shut(self) -> None:
        """The app is leaving: ssh's input ends, so ssh ends the remote agent's, which
        saves and lets its session go; that end is not reported as a drop."""
        self._closing = True
        connection = self.connection
        if connection is not None and connection.process.stdin is not None:
            with contextlib.suppress(Exception):
                connection.process.stdin.close()

    async def peers(self) -> dict[str, Any]:
        if self.connection is None or not self.connected:
            raise ConnectionLost("not connected")
        return await self.connection.peers()

    # -- the waiting input (the remote's ``_zcoder/input``: zcoder.acp.input) ------------

    async def steer(self, text: str) -> bool:
        """Enter while a turn runs: ``text`` goes into the remote's running turn, to land at
        its next safe point (it comes back as UserSteered where it landed). False when no
        turn there took it (it had ended, the connection is gone, or the remote zcoder is
        older and has no ``_zcoder/input``): the caller then runs it as a prompt. Raises
        RequestError when the remote refused the text itself (too long, say)."""
        try:
            await self._input("steer", text=text)
        except RequestError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            if data.get("reason") == IDLE or exc.code == METHOD_NOT_FOUND:
                return False
            raise
        except ConnectionLost:
            return False
        return True

    async def waiting_input(self) -> list[PendingItem]:
        """What waits on the remote (``list``), as the TUI lists its own."""
        return _items(await self._input("list"))

    async def input_action(self, action: str, **params: Any) -> list[PendingItem]:
        """``queue`` (text), ``drop`` (number) or ``resume`` there; what waits after it.
        Raises ConnectionLost or RequestError (its data's ``details`` say why)."""
        return _items(await self._input(action, **params))

    async def _input(self, action: str, **params: Any) -> dict[str, Any]:
        connection, session_id = self.connection, self.session_id
        if connection is None or session_id is None or not self.connected:
            raise ConnectionLost("not connected")
        return await connection.input(session_id, action, **params)

    async def sessions(self) -> list[SessionInfo]:
        """The remote workspace's saved sessions, newest first (ACP's session/list)."""
        if self.connection is None or not self.connected:
            raise ConnectionLost("not connected")
        return await self.connection.sessions()

    # -- turns --------------------------------------------------------------------------

    async def run_user_turn(self, text: str) -> TurnFinished:
        connection, session_id = self.connection, self.session_id
        if connection is None or session_id is None or not self.connected:
            return self._failed(
                f"not connected to {self.target.label}: nothing was sent. "
                "/reconnect connects again."
            )
        self.on_event(StatusChanged(Status.THINKING))
        prompt = asyncio.ensure_future(
            connection.conn.prompt(session_id=session_id, prompt=[text_block(text)])
        )
        dropped = asyncio.ensure_future(connection.dropped.wait())
        try:
            await asyncio.wait({prompt, dropped}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            await self._stop(connection, session_id, prompt)
            raise
        finally:
            dropped.cancel()
        if not prompt.done():
            prompt.cancel()
            return self._lost(connection)
        try:
            response = prompt.result()
        except RequestError as exc:
            return self._failed(f"{self.target.label} refused the prompt: {exc}")
        except (ConnectionError, OSError):  # the SDK fails what waits when the stream ends
            return self._lost(connection)
        meta = (response.field_meta or {}).get("zcoder", {})
        outcome = _OUTCOMES.get(str(meta.get("outcome")))
        if outcome is None:
            outcome = _STOP_REASONS.get(response.stop_reason, Outcome.COMPLETE)
        return self.reader.turn_ended(outcome, str(meta.get("error", "")))

    async def _stop(self, connection: Connection, session_id: str, prompt: Any) -> None:
        """Escape: the remote stops the turn (session/cancel); its answer is awaited so
        that what it saved is what the transcript shows."""
        for task in list(self._asking):
            task.cancel()
        with contextlib.suppress(Exception):
            await connection.conn.cancel(session_id)
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(connection.call(asyncio.shield(prompt)), STOP_WAIT_SECONDS)
        self.reader.interrupted("stopped")
        self.reader.turn_ended(Outcome.STOPPED)

    def _lost(self, connection: Connection) -> TurnFinished:
        commands = self.reader.interrupted("the connection was lost")
        self.interrupted += commands
        lines = [f"The connection to {self.target.label} was lost during this turn."]
        for command in commands:
            lines.append(
                f"The command `{command}` was running there: it was interrupted (zcoder on "
                f"{self.target.label} stops it when its connection ends) and is not run again."
            )
        lines.append("Your prompt is not sent again either.")
        self.on_event(ErrorNotice(" ".join(lines)))
        return self.reader.turn_ended(Outcome.ERROR, connection.why())

    def _failed(self, text: str) -> TurnFinished:
        self.on_event(ErrorNotice(text))
        return self.reader.turn_ended(Outcome.ERROR, text)

    async def run_user_command(self, command: str) -> UserCommandFinished:
        """``!command`` runs in this process's shell, in a workspace that is not here: over
        ``--connect`` it is not run at all (ask the model to run it there instead)."""
        why = (
            f"!commands run on the machine of the workspace, and that is {self.target.label}: "
            f"nothing was run. Ask for it in a prompt (it then asks for approval there)."
        )
        self.on_event(ErrorNotice(why))
        return UserCommandFinished("remote", command, "failed", why)

    # -- the ACP client side --------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if session_id != self.session_id:
            return
        if self._held is not None:
            self._held.append(update)
        else:
            self.reader(update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        offered: dict[str, str] = {option.option_id: option.kind for option in options}
        raw = tool_call.raw_input if isinstance(tool_call.raw_input, dict) else {}
        # A consent the remote keeps (raw "kept"): a question closed unanswered, or one this
        # screen cannot show, is no answer ("cancelled"), so the remote saves no refusal.
        kept = raw.get("kept") is True
        ask = asyncio.ensure_future(self._ask(tool_call, offered))
        self._asking.add(ask)
        try:
            decision = await ask
        except asyncio.CancelledError:
            if kept:
                return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
            decision = ApprovalDecision.DENY
        except Exception:
            if not kept:
                raise
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        finally:
            self._asking.discard(ask)
        wanted = {
            ApprovalDecision.ONCE: "allow_once",
            ApprovalDecision.ALWAYS: "allow_always",
            ApprovalDecision.DENY: "reject_once",
        }[decision]
        for option_id, kind in offered.items():
            if kind == wanted:
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option_id)
                )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def _ask(self, tool_call: ToolCallUpdate, offered: dict[str, str]) -> ApprovalDecision:
        raw = tool_call.raw_input if isinstance(tool_call.raw_input, dict) else {}
        always = "allow_always" in offered.values()
        sender = raw.get("requested_by")
        requested_by = str(sender) if sender else None
        origin = TurnOrigin.RELAY if requested_by else TurnOrigin.USER
        if tool_call.kind == "edit":
            paths = raw.get("paths")
            return await self.approver.approve_edit(
                EditApprovalRequest(
                    tool=str(raw.get("tool", "edit")),
                    paths=tuple(str(p) for p in paths) if isinstance(paths, list) else (),
                    diff=diff_of(tool_call.content) or text_of(tool_call.content),
                    allow_turn=always,
                    origin=origin,
                    requested_by=requested_by,
                )
            )
        info = self.connection.info if self.connection is not None else None
        timeout = raw.get("timeout_seconds")
        warning = raw.get("warning")
        web_host = raw.get("web_host")  # fetch_url's question: the web dialog, `a` per host
        return await self.approver.approve_command(
            CommandApprovalRequest(
                command=str(raw.get("command") or tool_call.title or ""),
                cwd=Path(str(raw.get("cwd") or self.workspace)),
                timeout_seconds=float(timeout) if isinstance(timeout, int | float) else 0.0,
                allow_always=always,
                origin=origin,
                profile=_profile(info.profile if info is not None else ""),
                warning=str(warning) if warning else None,
                requested_by=requested_by,
                refused=raw.get("refused") is True,
                kept=raw.get("kept") is True,  # a dialog that cannot ask then answers nothing
                background=raw.get("background") is True,
                web_host=str(web_host) if web_host else None,
                helper=str(raw["helper"]) if raw.get("helper") else None,
            )
        )


def _items(answer: dict[str, Any]) -> list[PendingItem]:
    """The remote's list of what waits (``waiting``), as PendingItems."""
    items = []
    for entry in answer.get("waiting") or []:
        kind = InputKind.STEER if entry.get("kind") == "steer" else InputKind.FOLLOW_UP
        items.append(PendingItem(kind, str(entry.get("text", "")), bool(entry.get("held"))))
    return items


def _profile(name: str) -> Profile:
    """The remote's profile, as its dialog names it (coding when it did not say)."""
    return next((p for p in Profile if p.value == name), Profile.CODING)
