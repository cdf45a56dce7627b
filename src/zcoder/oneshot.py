"""``zcoder --prompt TEXT``: one turn in the terminal, no full-screen UI.

Assistant text streams to stdout, tool activity and notices go to stderr, command
approvals are asked on /dev/tty (with no terminal they are denied, unless --yes; a command
the safety guard refuses is asked without --yes and refused with it). Text from the model,
tools, hooks and files reaches a terminal only made visible
(``zcoder.base.sanitize.screen_safe``): stdout on a terminal and every stderr line and
question; stdout to a pipe or a file gets the reply's exact text. The
session is saved like any other, marked one-shot: the interactive sessions list leaves it
out unless asked (``/sessions all``). A run that ends before its prompt is recorded keeps
no session. The relay never starts in this mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import signal
import sys
from typing import TextIO, cast

from zcoder.agent import (
    AgentEvent,
    AssistantDelta,
    AssistantMessage,
    ErrorNotice,
    Notice,
    Outcome,
    RelayReceived,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from zcoder.assembly import assemble_agent
from zcoder.base.sanitize import screen_safe, visible
from zcoder.commands import UserCommands
from zcoder.commands.run import run_typed
from zcoder.config import Config
from zcoder.extensions import Extensions
from zcoder.model import ModelClient, ModelError, make_client
from zcoder.model.context import (
    ContextWindow,
    WindowProbe,
    allocation_notice,
    resolve_for_model,
    same_model,
)
from zcoder.model.recovery import HeldReply
from zcoder.oneshot_approver import TtyApprover
from zcoder.oneshot_output import ErrorTee, JsonReport, ReplyStream
from zcoder.resume import lock_resumed, restored_model
from zcoder.sessions import Message, SessionStore, SessionStoreError
from zcoder.sessions.locks import LockTaker, SessionInUseError, SessionLock
from zcoder.tools import (
    CommandPolicy,
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
ALLOCATION_CHECK_SECONDS = 5.0
"""How long the check of Ollama's allocation (/api/ps) may delay the exit."""


class StreamPrinter:
    """Turns agent events into stdout (the answer) and stderr (everything else).

    stdout is a ``ReplyStream`` (exact to a pipe, made visible on a terminal); every line
    on stderr is made visible (``screen_safe``), whatever it is written to."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = ReplyStream(out)
        self.err = err
        self._mid_line = False
        # Text that may still turn out to be a tool call or reasoning written as text
        # stays off stdout until the reply is final (zcoder.model.recovery.HeldReply):
        # what reached stdout cannot be taken back, as the TUI takes its entry back.
        self._held = HeldReply()

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, AssistantDelta):
            self._write(self._held.feed(event.text))
        elif isinstance(event, AssistantMessage):
            if not event.streamed:
                self._end_line()
                self.out.write(event.text + "\n")
                self.out.end()
                self.out.flush()
            else:
                self._write(self._held.finish(event.text))
                self._end_line()
        elif isinstance(event, ToolStarted):
            self._end_line()
            summary = visible(", ".join(f"{k}={v!r}" for k, v in event.arguments.items()))
            if len(summary) > 200:
                summary = summary[:199] + "…"
            self._say(f"[tool] {visible(event.name)}({summary})")
        elif isinstance(event, ToolFinished):
            first = event.output.strip().splitlines()[0] if event.output.strip() else ""
            self._say(
                f"[tool] {visible(event.name)}: {event.status}"
                f"{' — ' + visible(first[:160]) if first else ''}"
            )
        elif isinstance(event, Notice):
            self._say(f"[zcoder] {event.text}")
        elif isinstance(event, ErrorNotice):
            self._end_line()
            self._say(f"zcoder: {event.text}")
        elif isinstance(event, TurnFinished) and self._held.content:
            self._write(self._held.finish(self._held.content))  # never final: shown as it is
            self._end_line()
        elif isinstance(event, RelayReceived):  # not reachable here; kept for completeness
            self._say(f"[relay] from {visible(event.sender_project)}")
        if isinstance(event, TurnFinished):
            self.out.end()
            self.out.flush()
        self.err.flush()

    def _say(self, line: str) -> None:
        self.err.write(screen_safe(line) + "\n")

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self._mid_line = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False


def exit_code(finished: TurnFinished) -> int:
    if finished.outcome is Outcome.COMPLETE:
        return EXIT_OK
    if finished.outcome is Outcome.STOPPED:
        return EXIT_INTERRUPTED
    return EXIT_FAILED


async def _run(
    config: Config,
    prompt: str,
    resume: str | None,
    out: TextIO,
    err: TextIO,
    *,
    keep_model: bool = False,
    report: JsonReport | None = None,
) -> int:
    try:
        store = SessionStore(config.home)
    except SessionStoreError as exc:
        err.write(f"zcoder: {exc}\n")
        return EXIT_FAILED
    lock: SessionLock | None = None
    try:
        with store:
            workspace = str(config.workspace)
            profile = config.profile.value
            try:
                if resume:
                    lock = lock_resumed(config.home, resume)
                    data = store.load(resume, workspace, profile)
                    session_id, messages, ledger = data.info.id, data.messages, data.user_ledger
                    session_model: str | None = data.info.model
                else:
                    taker = LockTaker(config.home)
                    try:
                        info = store.reuse_or_create(
                            workspace, profile, config.model, take=taker, one_shot=True
                        )
                    finally:
                        lock = taker.lock  # released below, whatever happened
                    for busy in taker.in_use[:1]:
                        err.write(f"[zcoder] {busy}; using session {info.id}\n")
                    session_id, messages, ledger, session_model = info.id, [], [], None
            except SessionInUseError as exc:
                err.write(f"zcoder: {exc}; continue it there, or leave it there and try again\n")
                return EXIT_FAILED
            except LookupError:
                err.write(
                    f"zcoder: no session {resume!r} for this workspace and profile "
                    f"({workspace}, {profile})\n"
                )
                return EXIT_USAGE
            except SessionStoreError as exc:
                err.write(f"zcoder: {exc}\n")
                return EXIT_FAILED
            try:
                return await _run_turn(
                    config,
                    prompt,
                    store=store,
                    session_id=session_id,
                    messages=messages,
                    ledger=ledger,
                    session_model=session_model,
                    out=out,
                    err=err,
                    keep_model=keep_model,
                    report=report,
                )
            finally:
                # Stopped or failed before the prompt was recorded: no empty, untitled
                # session is left in the sessions list.
                with contextlib.suppress(SessionStoreError):
                    store.discard_if_unused(session_id)
    finally:
        if lock is not None:
            lock.release()


async def _run_turn(
    config: Config,
    prompt: str,
    *,
    store: SessionStore,
    session_id: str,
    messages: list[Message],
    ledger: list[str],
    session_model: str | None,
    out: TextIO,
    err: TextIO,
    keep_model: bool,
    report: JsonReport | None = None,
) -> int:
    printer = StreamPrinter(out, err)
    if report is not None:
        report.session_id = session_id

    def on_event(event: AgentEvent) -> None:
        printer(event)
        if report is not None:
            report(event)

    async with make_client(config) as client:
        model = config.model
        if session_model is not None and not keep_model:
            model = await _resumed_model(client, session_model, model, err)
        if session_model is not None and not same_model(session_model, model):
            with contextlib.suppress(SessionStoreError):
                store.set_model(session_id, model)
        agent, extensions = assemble_agent(
            config,
            client,
            model,
            approver=TtyApprover(err, unattended=config.command_policy is CommandPolicy.ALLOW),
            on_event=on_event,
            store=store,
            on_problem=lambda problem: err.write(f"[zcoder] {visible(problem)}\n"),
            session_id=session_id,
        )
        if report is not None:
            report.model = model
        agent.use_session(session_id, messages, ledger)
        try:
            windows: list[ContextWindow] = []

            async def sized_turn() -> TurnFinished:
                # The window first: num_ctx goes with every request (zcoder.model.context).
                window = await resolve_for_model(
                    model, explicit=config.context_window, home=config.home, probe=client
                )
                for warning in window.warnings:
                    err.write(f"[zcoder] {screen_safe(warning)}\n")
                agent.settings.num_ctx = window.tokens
                windows.append(window)
                await agent.session_started("resume" if messages else "startup")
                # /NAME of a custom command or a skill, /skill NAME, $NAME (zcoder.commands).
                return await run_typed(agent, user_commands(extensions, prompt, err), prompt)

            task = asyncio.ensure_future(sized_turn())
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal.SIGINT, task.cancel)
                loop.add_signal_handler(signal.SIGTERM, task.cancel)
            try:
                finished = await task
            except asyncio.CancelledError:
                err.write("zcoder: interrupted\n")
                return EXIT_INTERRUPTED
            if windows and isinstance(client, WindowProbe):
                notice = await _allocation_notice(client, model, windows[0])
                if notice is not None:
                    err.write(f"[zcoder] {screen_safe(notice)}\n")
        finally:  # the run's MCP servers end with it (the manager's atexit is a last resort)
            if agent.mcp is not None:
                await asyncio.to_thread(agent.mcp.close)
    # Errors and incomplete turns were printed as they happened.
    if finished.outcome is Outcome.LOOP_STOPPED:
        err.write(f"zcoder: loop stopped: {screen_safe(finished.error)}\n")
    if finished.outcome is Outcome.BLOCKED:
        err.write("zcoder: the agent reports the task is blocked\n")
    return exit_code(finished)


def user_commands(extensions: Extensions, prompt: str, err: TextIO) -> UserCommands:
    """The custom commands and skills a prompt may name. zcoder's own command names win
    as in the TUI; they are read from its registry (which imports the TUI's modules) only
    when the prompt starts with ``/``, and refusals are said then."""
    reserved: frozenset[str] = frozenset()
    if prompt.lstrip().startswith("/"):
        from zcoder.tui.command_registry import commands  # noqa: PLC0415 - only then

        reserved = commands().builtin_names()
    user = UserCommands.build(extensions.skills, extensions.commands, reserved)
    for text in user.refused if reserved else ():
        err.write(f"[zcoder] {visible(text)}\n")
    return user


async def _resumed_model(client: ModelClient, session_model: str, current: str, err: TextIO) -> str:
    """The resumed session's model, when the server has it (zcoder.resume.restored_model)."""
    try:
        available: list[str] | None = await client.list_models()
    except ModelError:
        available = None
    model, notice = restored_model(session_model, current, available)
    if notice is not None:
        err.write(f"[zcoder] {visible(notice)}\n")
    return model


async def _allocation_notice(probe: WindowProbe, model: str, window: ContextWindow) -> str | None:
    """Whether Ollama loaded the model with the window asked for; said after the turn."""
    try:
        allocated = await asyncio.wait_for(
            probe.loaded_context_length(model), ALLOCATION_CHECK_SECONDS
        )
    except (ModelError, TimeoutError):
        return None
    return allocation_notice(model, window, allocated)


def run_prompt(
    config: Config,
    prompt: str,
    resume: str | None = None,
    *,
    keep_model: bool = False,
    output_format: str = "text",
) -> int:
    """Run one turn; returns the process exit code. ``resume``: a full session id (the CLI
    resolves prefixes); its model is used unless ``keep_model`` (``-m`` was given).
    ``output_format`` ``json``: stdout gets only one JSON object (zcoder.oneshot_output)."""
    if output_format != "json":
        return _run_prompt(
            config, prompt, resume, sys.stdout, sys.stderr, keep_model=keep_model, report=None
        )
    report = JsonReport(config.model)
    tee = ErrorTee(sys.stderr)
    # The tee has the only two methods zcoder calls on its stderr: write and flush.
    code = _run_prompt(
        config,
        prompt,
        resume,
        io.StringIO(),
        cast(TextIO, tee),
        keep_model=keep_model,
        report=report,
    )
    report.write(sys.stdout, code, error=tee.last_error)
    return code


def _run_prompt(
    config: Config,
    prompt: str,
    resume: str | None,
    out: TextIO,
    err: TextIO,
    *,
    keep_model: bool,
    report: JsonReport | None,
) -> int:
    try:
        return asyncio.run(
            _run(config, prompt, resume, out, err, keep_model=keep_model, report=report)
        )
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug of ours: one clear line, the details in the log
        logging.getLogger(__name__).debug("--prompt failed", exc_info=True)
        err.write(screen_safe(f"zcoder: internal error: {type(exc).__name__}: {exc}") + "\n")
        err.flush()
        return EXIT_FAILED
