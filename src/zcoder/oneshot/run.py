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
import os
import signal
import sys
from typing import TextIO, assert_never, cast

from zcoder.agent import (
    AgentEvent,
    AssistantDelta,
    AssistantMessage,
    ContextUsage,
    ErrorNotice,
    Notice,
    Outcome,
    RelayReceived,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from zcoder.agent import events as ev
from zcoder.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_READER_GONE,
    EXIT_USAGE,
    UsageError,
)
from zcoder.base.sanitize import screen_safe, visible
from zcoder.commands import UserCommands
from zcoder.commands.run import run_typed
from zcoder.config import Config
from zcoder.frontend.assembly import assemble_agent
from zcoder.frontend.extensions import Extensions
from zcoder.frontend.session import OpenedSession, open_session, size_window
from zcoder.model import ModelError, make_client
from zcoder.model.context import (
    ContextWindow,
    WindowProbe,
    allocation_notice,
)
from zcoder.model.recovery import HeldReply
from zcoder.oneshot.approver import TtyApprover
from zcoder.oneshot.goal import goal_args, run_goal
from zcoder.oneshot.output import ErrorTee, JsonReport, ReplyWriter
from zcoder.sessions import SessionStore, SessionStoreError
from zcoder.sessions.locks import SessionInUseError
from zcoder.tools import (
    CommandPolicy,
)

ALLOCATION_CHECK_SECONDS = 5.0
"""How long the check of Ollama's allocation (/api/ps) may delay the exit."""


class StreamPrinter:
    """Turns agent events into stdout (the answer) and stderr (everything else).

    stdout is a ``ReplyWriter`` (exact to a pipe, made visible on a terminal); every line
    on stderr is made visible (``screen_safe``), whatever it is written to."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = ReplyWriter(out)
        self.err = err
        self._mid_line = False
        # Text that may still turn out to be a tool call or reasoning written as text
        # stays off stdout until the reply is final (zcoder.model.recovery.HeldReply):
        # what reached stdout cannot be taken back, as the TUI takes its entry back.
        self._held = HeldReply()

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case AssistantDelta():
                self._write(self._held.feed(event.text))
            case AssistantMessage(streamed=False):
                self._end_line()
                self.out.write(event.text + "\n")
                self.out.end()
                self.out.flush()
            case AssistantMessage():
                self._write(self._held.finish(event.text))
                self._end_line()
            case ToolStarted():
                self._end_line()
                summary = visible(", ".join(f"{k}={v!r}" for k, v in event.arguments.items()))
                if len(summary) > 200:
                    summary = summary[:199] + "…"
                self._say(f"[tool] {visible(event.name)}({summary})")
            case ToolFinished():
                first = event.output.strip().splitlines()[0] if event.output.strip() else ""
                self._say(
                    f"[tool] {visible(event.name)}: {event.status}"
                    f"{' — ' + visible(first[:160]) if first else ''}"
                )
            case Notice():
                self._say(f"[zcoder] {event.text}")
            case ErrorNotice():
                self._end_line()
                self._say(f"zcoder: {event.text}")
            case TurnFinished():
                if self._held.content:  # never final: shown as it is
                    self._write(self._held.finish(self._held.content))
                    self._end_line()
                self.out.end()
                self.out.flush()
            case ev.UserSteered():  # not reachable here: --prompt takes no steering
                self._say(f"[steering] {visible(event.text)}")
            case ev.PlanChanged():
                self._end_line()
                self._say(f"[plan] {event.plan.one_line()}")
            case ev.SubagentProgress():
                self._end_line()
                self._say(f"[subagent] {visible(event.step)} · turn {event.turns}")
            case RelayReceived():  # not reachable here; kept for completeness
                self._say(f"[relay] from {visible(event.sender_project)}")
            case (
                ev.UserCommandStarted()
                | ev.UserCommandFinished()
                | ev.ToolOutput()
                | ev.ThinkingDelta()
                | ev.StatusChanged()
                | ContextUsage()
            ):
                pass  # stderr has one line per tool call; the reasoning is not shown
            case _:
                assert_never(event)
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
    opened: OpenedSession | None = None
    try:
        with store:
            try:
                opened = open_session(
                    store, config, config.model, resume=resume or None, one_shot=True
                )
            except SessionInUseError as exc:
                err.write(f"zcoder: {exc}; continue it there, or leave it there and try again\n")
                return EXIT_FAILED
            except LookupError:
                err.write(
                    f"zcoder: no session {resume!r} for this workspace and profile "
                    f"({config.workspace}, {config.profile.value})\n"
                )
                return EXIT_USAGE
            except SessionStoreError as exc:
                err.write(f"zcoder: {exc}\n")
                return EXIT_FAILED
            for busy in opened.in_use[:1]:
                err.write(f"[zcoder] {busy}; using session {opened.id}\n")
            try:
                return await _run_turn(
                    config,
                    prompt,
                    store=store,
                    opened=opened,
                    out=out,
                    err=err,
                    keep_model=keep_model,
                    report=report,
                )
            finally:
                # Stopped or failed before the prompt was recorded: no empty, untitled
                # session is left in the sessions list.
                with contextlib.suppress(SessionStoreError):
                    store.discard_if_unused(opened.id)
    finally:
        if opened is not None:
            opened.release()


async def _run_turn(
    config: Config,
    prompt: str,
    *,
    store: SessionStore,
    opened: OpenedSession,
    out: TextIO,
    err: TextIO,
    keep_model: bool,
    report: JsonReport | None = None,
) -> int:
    try:  # "/goal OBJECTIVE": the goal's turns until its check accepts it
        goal = goal_args(prompt)
    except UsageError as exc:
        err.write(f"zcoder: {exc}\n")
        return EXIT_USAGE
    printer = StreamPrinter(out, err)
    session_id, messages = opened.id, opened.data.messages
    if report is not None:
        report.session_id = session_id

    turn: list[asyncio.Task[TurnFinished]] = []  # the turn, once it runs
    reader_gone: list[bool] = []  # standard output's reader went away

    def on_event(event: AgentEvent) -> None:
        try:
            printer(event)
        except BrokenPipeError:  # ``| head`` has read enough: stop, as a pipe's writer does
            if not reader_gone:
                reader_gone.append(True)
                for running in turn:
                    running.cancel()
            return
        if report is not None:
            report(event)

    async with make_client(config) as client:
        # A resumed session's model, when the server has it (zcoder.frontend.session).
        model, notice = await opened.choose_model(
            store, client, config.model, keep_model=keep_model
        )
        if notice is not None:
            err.write(f"[zcoder] {visible(notice)}\n")
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
        agent.use_session(session_id, messages, opened.data.user_ledger, opened.data.state)
        try:
            windows: list[ContextWindow] = []

            async def sized_turn() -> TurnFinished:
                # The window first: num_ctx goes with every request (zcoder.model.context).
                window = await size_window(
                    agent, config, lambda warning: err.write(f"[zcoder] {screen_safe(warning)}\n")
                )
                windows.append(window)
                await agent.session_started("resume" if messages else "startup")
                if goal is not None:
                    state = opened.data.state
                    return await run_goal(
                        agent, goal, store=store, session_id=session_id, state=state, err=err
                    )
                # /NAME of a custom command or a skill, /skill NAME, $NAME (zcoder.commands).
                return await run_typed(agent, user_commands(extensions, prompt, err), prompt)

            task = asyncio.ensure_future(sized_turn())
            turn.append(task)
            if reader_gone:  # gone before the turn began
                task.cancel()
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal.SIGINT, task.cancel)
                loop.add_signal_handler(signal.SIGTERM, task.cancel)
            try:
                finished = await task
            except asyncio.CancelledError:
                if reader_gone:
                    quiet(out)  # nothing more reaches the pipe, Python's own last flush included
                    return EXIT_READER_GONE
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


def quiet(out: TextIO) -> None:
    """Point ``out`` at /dev/null, its file descriptor too when it has one: a pipe whose
    reader has gone takes no more, and Python's flush at exit would say so in a
    traceback."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, out.fileno())
        os.close(null)


def user_commands(extensions: Extensions, prompt: str, err: TextIO) -> UserCommands:
    """The custom commands and skills a prompt may name. zcoder's own command names win
    as in the TUI; they are read from the registry (zcoder.slash) only when the prompt
    starts with ``/``, and refusals are said then."""
    reserved: frozenset[str] = frozenset()
    if prompt.lstrip().startswith("/"):
        from zcoder.slash.registry import commands  # noqa: PLC0415 - only then

        reserved = commands().builtin_names()
    user = UserCommands.build(extensions.skills, extensions.commands, reserved)
    for text in user.refused if reserved else ():
        err.write(f"[zcoder] {visible(text)}\n")
    return user


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
    ``output_format`` ``json``: stdout gets only one JSON object (zcoder.oneshot.output)."""
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
