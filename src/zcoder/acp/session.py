"""One ACP session: a zcoder agent in one workspace, driven by prompts from the client.

It is what the TUI's app is to a session, without the screen: the session is opened as
the TUI and ``--prompt`` open theirs (zcoder.frontend.session) and held with its lock for
as long as it is open, so two front ends never write one session; the agent is built as
``--prompt`` builds it (assemble_agent, make_client, the context window sized for the
model before the first request); its events go out through the update pump and its
questions through the ACP approver. A prompt's content and the answer it gets are
zcoder.acp.prompts'. A prompt naming a custom command or a skill is carried out as
``--prompt`` carries it out (zcoder.acp.user_commands, zcoder.commands.run); zcoder's own
commands come first.

``session/cancel`` does what Escape does in the TUI: the turn's task is cancelled, which
stops the model's stream, interrupts a running command (its process group is killed by
the command tool) and records the turn as stopped; the prompt then answers ``cancelled``.
Closing the session (the client went away) cancels its turn the same way and waits for
it, so what happened is saved before the lock is let go.

The user's waiting input (``_zcoder/input``, zcoder.acp.input) is the agent's steering:
a steer lands at the running turn's next safe point; what is left when a turn ends runs
right after it, in the same request (``_then_waiting``); a stopped turn holds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from acp import RequestError, update_agent_message_text, update_user_message_text
from acp.helpers import update_available_commands
from acp.schema import (
    PromptResponse,
)

from zcoder.acp.approvals import AcpApprover, ReportingJournal
from zcoder.acp.commands import available_commands, find_command, is_turn, run_command
from zcoder.acp.input import SessionInput
from zcoder.acp.mcp_servers import attach_client_mcp, client_entries
from zcoder.acp.notices import SessionNotice
from zcoder.acp.permission import PermissionAsker
from zcoder.acp.prompts import (
    CANCELLED,
    PromptBlock,
    prompt_images,
    prompt_response,
    prompt_text,
)
from zcoder.acp.relay import SessionRelay
from zcoder.acp.updates import EventTranslator, Send, Update, UpdatePump, replay
from zcoder.acp.user_commands import offered, user_commands
from zcoder.agent import (
    Agent,
    AgentEvent,
    Notice,
    TurnFinished,
)
from zcoder.commands import UserCommands
from zcoder.commands.run import run_typed
from zcoder.config import Config
from zcoder.frontend.activity import ActivityTracker
from zcoder.frontend.assembly import assemble_agent
from zcoder.frontend.pending import PendingInput
from zcoder.frontend.session import OpenedSession, open_session, size_window
from zcoder.model import ModelClient, make_client
from zcoder.sessions import SessionStore, SessionStoreError
from zcoder.sessions.locks import SessionInUseError, SessionLock
from zcoder.slash.registry import Command

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(eq=False)
class AcpSession:
    """A session open in this process; build it with :meth:`open`."""

    config: Config
    store: SessionStore
    id: str
    lock: SessionLock | None
    agent: Agent | None = field(init=False, default=None)
    pump: UpdatePump | None = field(init=False, default=None)
    _stack: contextlib.AsyncExitStack = field(init=False, default_factory=contextlib.AsyncExitStack)
    relay: SessionRelay | None = field(init=False, default=None)
    # What this session is doing, for its relay's manifest (zcoder.frontend.activity).
    activity: ActivityTracker = field(
        init=False, default_factory=lambda: ActivityTracker(lambda: None)
    )
    # The workspace's custom commands and skills.
    user_commands: UserCommands = field(init=False, default_factory=UserCommands)
    _turn: asyncio.Task[Any] | None = field(init=False, default=None)
    # One turn at a time: the editor's prompt or a relayed task.
    _turns: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)
    # A prompt from the editor runs or waits for its turn.
    _prompting: bool = field(init=False, default=False)
    _cancel_asked: bool = field(init=False, default=False)
    _window_sized: bool = field(init=False, default=False)
    # SessionStart hooks run before the first turn (startup, or resume): an update
    # they cause then goes to a session the editor knows.
    _session_source: str | None = field(init=False, default="startup")
    # Where the window's size came from (/context).
    window_source: str | None = field(init=False, default=None)
    # The user's waiting input (zcoder.acp.input): steering and follow-ups.
    pending: PendingInput = field(init=False, default_factory=PendingInput)
    input: SessionInput = field(init=False)
    # Held input resumed while nothing ran, running as the session's turns.
    _waiting: asyncio.Task[None] | None = field(init=False, default=None)

    @classmethod
    async def open(
        cls,
        config: Config,
        store: SessionStore,
        client: PermissionAsker,
        send: Send,
        *,
        resume: str | None = None,
        keep_model: bool = False,
        mcp_servers: Sequence[Any] = (),
        notices: bool = False,
    ) -> tuple[AcpSession, list[Update]]:
        """A new session (``resume`` None) or a saved one of this workspace and profile,
        with the updates that replay the saved one (its notices left out when the client
        takes notices, which are live events: zcoder.acp.notices)."""
        try:
            opened = open_session(store, config, config.model, resume=resume)
        except SessionInUseError as exc:
            raise RequestError.invalid_request({"details": str(exc)}) from None
        except LookupError:
            raise RequestError.resource_not_found(f"zcoder-session:{resume}") from None
        except SessionStoreError as exc:
            raise RequestError.internal_error({"details": str(exc)}) from None
        history: list[Update] = []
        if opened.resumed:
            history = replay(opened.data.events, config.workspace, notices=notices)
        session = cls(config, store, opened.id, opened.lock)
        try:
            await session._start(
                client=client,
                send=send,
                opened=opened,
                keep_model=keep_model,
                mcp_servers=mcp_servers,
            )
        except BaseException:
            await session.close()
            raise
        return session, history

    async def _start(
        self,
        *,
        client: PermissionAsker,
        send: Send,
        opened: OpenedSession,
        keep_model: bool,
        mcp_servers: Sequence[Any],
    ) -> None:
        config = self.config
        model_client: ModelClient = make_client(config)
        await self._stack.enter_async_context(model_client)
        model, _notice = await opened.choose_model(
            self.store, model_client, config.model, keep_model=keep_model
        )
        translator = EventTranslator(config.workspace)
        pump = UpdatePump(send)
        self.pump = pump
        journal: list[ReportingJournal] = []
        self.activity = ActivityTracker(lambda: None if self.relay is None else self.relay.relay)
        approver = AcpApprover(
            self.id, client, pump, translator, lambda: journal[0], self.activity.asking
        )

        def on_event(event: AgentEvent) -> None:
            self.activity.on_event(event)
            pump.put(translator(event))

        # Published as a peer (zcoder.acp.relay): the editor's user answers for this session.
        self.relay = SessionRelay.start(config, session_id=self.id, store=self.store, show=pump.put)
        relay = self.relay
        editors_servers = client_entries(mcp_servers)
        agent, extensions = assemble_agent(
            config,
            model_client,
            model,
            approver=approver,
            on_event=on_event if relay is None else relay.steers.watching(on_event),
            store=self.store,
            on_problem=lambda problem: log.warning("%s", problem),
            relay=None if relay is None else (relay.relay, approver),
            relay_available=lambda: relay is not None and relay.available,
            session_id=self.id,
            # The editor's servers are attached below, with zcoder's own (acp/mcp_servers.py).
            own_mcp=not editors_servers,
        )
        self.user_commands = user_commands(extensions.skills, extensions.commands)
        # The same journal, telling the update stream the whole text of each edit.
        journal.append(
            ReportingJournal(
                config.workspace,
                home=self.store.home,
                policy=config.edit_policy,
                on_commit=translator.edited,
            )
        )
        agent.edits = journal[0]
        agent.use_session(self.id, opened.data.messages, opened.data.user_ledger, opened.data.state)
        # Saved at every change; a loaded session's comes back held (nothing runs unasked).
        self.pending = PendingInput(lambda items: self.store.replace_pending(self.id, items))
        self.pending.on_save_error = lambda text: pump.put([SessionNotice("error", text)])
        if opened.resumed:
            self.pending.restore(opened.data.pending)
        self.input = SessionInput(
            self.id, self.pending, lambda: self.turn_running, self.run_waiting
        )
        agent.steering = self.pending
        if editors_servers:
            agent.mcp = attach_client_mcp(
                agent.registry, config.workspace, config.home, editors_servers, config.mcp_limits
            )
        self.agent = agent
        if opened.resumed:
            self._session_source = "resume"
        if relay is not None:
            relay.attach(agent, self)

    @property
    def running(self) -> bool:
        return self._turn is not None

    @property
    def busy(self) -> bool:
        """A turn runs, or the editor's prompt waits for one to end."""
        return self._prompting or self._turns.locked()

    @property
    def turn_running(self) -> bool:
        """A turn holds the session (a prompt's, a relayed task's, or what waited after
        one): steering and follow-ups sent now are its (zcoder.acp.input)."""
        return self._turns.locked()

    async def prompt(self, blocks: Sequence[PromptBlock]) -> PromptResponse:
        """One user turn; returns when it ended, after all its updates went out. A relayed
        task that is running ends first; none starts while the prompt waits or runs."""
        if self._prompting:
            raise RequestError.invalid_request(
                {"details": "a prompt is already running in this session"}
            )
        text = prompt_text(blocks)
        if not text.strip():
            raise RequestError.invalid_params({"details": "the prompt is empty"})
        images = prompt_images(blocks, self.config.image_max_bytes)
        found = find_command(text)
        self._prompting = True
        self._cancel_asked = False
        self.started_agent().images.offered = images  # the turn's prompt takes them
        try:
            if found is not None and not is_turn(found[0]):  # answered at once, no turn
                return await self._answer(await run_command(self, *found))
            async with self._turns:
                if self._cancel_asked:  # stopped while a relayed task ran before it
                    return CANCELLED
                if self.relay is not None:
                    self.relay.user_acted()
                return await self._then_waiting(await self._carry_out(text, found))
        finally:
            self._prompting = False
            self.started_agent().images.offered = []  # a command, not a turn, took none
            if self.relay is not None:
                self.relay.wake()

    async def _carry_out(self, text: str, found: tuple[Command, str] | None) -> PromptResponse:
        """The user's text, the lock held: a command (``found``), else a turn."""
        if found is not None:
            command, argument = found
            if not is_turn(command):
                return await self._answer(await run_command(self, command, argument))
            answer = await self._run(lambda _agent: run_command(self, command, argument))
            return CANCELLED if answer is None else await self._answer(answer)
        # /NAME of a custom command or a skill, /skill NAME, $NAME; else as typed.
        finished = await self._run(lambda agent: run_typed(agent, self.user_commands, text))
        return CANCELLED if finished is None else prompt_response(finished)

    async def _then_waiting(self, response: PromptResponse) -> PromptResponse:
        """What waited for the turn that gave ``response`` runs now, the lock still held:
        steering it did not take (it ended before a safe point) as a turn of its own, then
        each follow-up as a prompt, shown first as the user's message. A stopped turn
        holds the rest (``_zcoder/input`` resume). The last turn's response."""
        pending = self.pending
        while response.stop_reason != "cancelled":
            if not (pending.steering_left() or pending.follow_ups()):
                return response
            if self._cancel_asked:  # stopped between two of them: the rest is held
                response = CANCELLED
                break
            if pending.steering_left():
                finished = await self._run(lambda agent: agent.run_steered_turn())
                response = CANCELLED if finished is None else prompt_response(finished)
                continue
            text = pending.pop_follow_up()
            if text is None:
                return response
            if self.relay is not None:
                self.relay.user_acted()
            if self.pump is not None:
                self.pump.put([update_user_message_text(text)])
            response = await self._carry_out(text, find_command(text))
        pending.hold()
        return response

    def run_waiting(self) -> None:
        """Held input resumed while nothing runs: it runs now, as the session's turns (its
        updates come without a request, as a relayed task's do)."""
        if self._waiting is None or self._waiting.done():
            self._waiting = asyncio.get_running_loop().create_task(self._waiting_alone())

    async def _waiting_alone(self) -> None:
        try:
            async with self._turns:
                self._cancel_asked = False
                await self._then_waiting(PromptResponse(stop_reason="end_turn"))
        except Exception:
            log.exception("the waiting input of session %s failed", self.id)
        finally:
            if self.relay is not None:
                self.relay.wake()

    async def _answer(self, text: str) -> PromptResponse:
        """A command's answer, shown as the reply (it is not part of the conversation)."""
        if self.pump is not None:
            self.pump.put([update_agent_message_text(text)])
        await self._flush()
        return PromptResponse(stop_reason="end_turn")

    def offer_commands(self) -> None:
        """Tell the editor zcoder's commands (zcoder.acp.commands), then the workspace's:
        queued behind what the session sent so far, so it reaches the client after the
        session's answer."""
        if self.pump is not None:
            entries = available_commands() + offered(self.user_commands)
            self.pump.put([update_available_commands(entries)])

    def announce_held(self) -> None:
        """A loaded session's input that waited when it was last open is held: say so."""
        if self.pump is not None:
            self.pump.put(self.input.held_notice())

    def started_agent(self) -> Agent:
        assert self.agent is not None, "the session was not started"
        return self.agent

    async def run_relayed(
        self, work: Callable[[Agent], Awaitable[TurnFinished]]
    ) -> TurnFinished | None:
        """A relayed task as this session's turn (zcoder.acp.relay): it waits for the
        running turn; None when session/cancel stopped it."""
        async with self._turns:
            self._cancel_asked = False
            finished = await self._run(work)
            await self._then_waiting(CANCELLED if finished is None else prompt_response(finished))
            return finished

    async def _run(self, work: Callable[[Agent], Awaitable[T]]) -> T | None:
        """One turn, the lock held; after all its updates went out. None: session/cancel
        stopped it (a cancellation from elsewhere, closing say, goes on up)."""
        turn = asyncio.create_task(self._sized(work))
        self._turn = turn
        if self.relay is not None:
            self.relay.busy(True)
        self.activity.turn_started()
        try:
            finished: T | None = await turn
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not self._cancel_asked or (current is not None and current.cancelling()):
                raise
            finished = None
        finally:
            self._turn = None
            if self.relay is not None:
                self.relay.busy(False)
            self.activity.turn_ended()
        await self._flush()
        return finished

    async def _sized(self, work: Callable[[Agent], Awaitable[T]]) -> T:
        await self.size_window()
        agent = self.started_agent()
        if self._session_source is not None:
            source, self._session_source = self._session_source, None
            await agent.session_started(source)
        return await work(agent)

    async def size_window(self) -> None:
        agent = self.started_agent()
        if not self._window_sized:
            # num_ctx goes with every request: sized once, before the first (--prompt too).
            window = await size_window(
                agent, self.config, lambda warning: agent.recorder.emit(Notice(warning))
            )
            self.window_source = window.source
            self._window_sized = True

    def cancel(self) -> None:
        """What Escape does: stop the running turn, the editor's or a relayed task's (and
        a prompt waiting behind a relayed task does not start)."""
        if self._prompting or self._turns.locked():
            self._cancel_asked = True
        if self._turn is not None and not self._turn.done():
            self._cancel_asked = True
            self._turn.cancel()

    async def _flush(self) -> None:
        if self.pump is not None:
            await self.pump.flush()

    async def close(self) -> None:
        """Stop the turn, wait until it saved what it did, then let the session go."""
        log.info("closing ACP session %s", self.id)
        turn = self._turn
        for task in (self._waiting, turn):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self.relay is not None:
            try:
                await self.relay.close()  # the peer is withdrawn: no stale socket
            except Exception:
                log.exception("withdrawing the relay peer failed")
        if self.agent is not None and self.agent.mcp is not None:
            await asyncio.to_thread(self.agent.mcp.close)  # its servers' processes end
        if self.pump is not None:
            await self.pump.close()
        try:
            await self._stack.aclose()
        finally:
            with contextlib.suppress(SessionStoreError):
                self.store.discard_if_unused(self.id)
            if self.lock is not None:
                self.lock.release()


def workspace_of(cwd: str) -> Path:
    """The ``cwd`` of session/new or session/load as a workspace: an absolute path to an
    existing directory (the protocol's rule, and zcoder's ``-w``)."""
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"details": f"cwd must be an absolute path: {cwd!r}"})
    if not path.is_dir():
        raise RequestError.invalid_params({"details": f"cwd is not a directory: {cwd}"})
    return path
