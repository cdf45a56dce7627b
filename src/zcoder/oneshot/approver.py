"""``zcoder --prompt``'s approvals: asked on the terminal (/dev/tty), never on the
standard streams, which belong to the reply and its notices.

With no terminal, a question is not answered DENY but raises ``NoApprovalTerminal``, so
the model is told why; under ``--yes`` a command the safety guard refuses is never asked
and never run. The question's text passes ``screen_safe``: what the model or a file
wrote cannot hide the command from the person asked.
"""

from __future__ import annotations

import asyncio
import os
from typing import TextIO

from zcoder.base.errors import ZcoderError
from zcoder.base.sanitize import screen_safe
from zcoder.tools import ApprovalDecision, CommandApprovalRequest, EditApprovalRequest


class NoApprovalTerminal(ZcoderError, OSError):
    """There is no terminal to ask on; the approval policy treats this as a denial."""


class TtyApprover:
    """Asks on the controlling terminal; without one every command is denied.

    ``unattended`` (``--yes``): the user chose not to be asked, so a command the guard
    refuses, which --yes never approves, is refused without asking.

    The answer is read from /dev/tty through the event loop, not in a worker thread: a
    thread blocked in ``readline`` would keep the process alive after Ctrl+C (asyncio.run
    waits for its executor's threads on Python 3.11).
    """

    def __init__(self, err: TextIO, *, unattended: bool = False) -> None:
        self.err = err
        self.unattended = unattended

    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        if request.refused and self.unattended:
            self.err.write(
                "zcoder: the safety guard refuses a command and --yes never approves it; "
                "it was not run (run without --yes to be asked)\n"
            )
            self.err.flush()
            raise NoApprovalTerminal("--yes: nobody is asked, and --yes never approves it")
        if request.helper is not None and self.unattended:
            self.err.write(
                f"zcoder: {request.helper} runs outside zcoder's approvals and --yes never "
                "starts it; it was not run (run without --yes to be asked)\n"
            )
            self.err.flush()
            raise NoApprovalTerminal("--yes: nobody is asked, and --yes never starts a helper")
        choices = "[y]es once, [a]llow all, [n]o" if request.allow_always else "[y]es, [n]o"
        where = "in the background (until zcoder exits) " if request.background else ""
        text = f"\nRun this command {where}in {request.cwd}?\n  $ {request.command}\n"
        if request.mcp is not None:  # an MCP tool call or server start: no shell command
            text = f"\nAllow this?\n  {request.command}\n"
        if request.web_host is not None:  # fetch_url: `a` allows this host only
            text = f"\nFetch this web page?\n  {request.command}\n"
            if request.allow_always:
                choices = f"[y]es once, [a]llow {request.web_host} for this run, [n]o"
        if request.helper is not None:
            text = f"\nHand this task to {request.helper}, in {request.cwd}?"
            text += f"\n  $ {request.command}\n"
        if request.refused:
            text = f"\nThe safety guard refuses this command. Run it anyway, in {request.cwd}?"
            text += f"\n  $ {request.command}\n"
        if request.warning:
            said = "refused by the safety guard" if request.refused else "warning"
            text += f"  {said}: {request.warning}\n"
        return await self._ask(
            f"{screen_safe(text)}{choices}: ",
            grant=request.allow_always,
            said="no terminal to ask for approval; the command was denied",
            why="no terminal to ask the user for approval; "
            "rerun interactively, or with --yes to allow commands",
        )

    async def approve_edit(self, request: EditApprovalRequest) -> ApprovalDecision:
        """ZCODER_EDITS=ask: the diff on the terminal, then y/n (a: the rest of the turn)."""
        choices = "[y]es, [a]ll edits of this turn, [n]o" if request.allow_turn else "[y]es, [n]o"
        paths = ", ".join(request.paths)
        text = f"\n{request.tool} wants to change {paths}:\n{request.diff}\n"
        return await self._ask(
            f"{screen_safe(text)}{choices}: ",
            grant=request.allow_turn,
            said="no terminal to ask about an edit; nothing was written",
            why="no terminal to ask the user about this edit",
        )

    async def _ask(self, question: str, *, grant: bool, said: str, why: str) -> ApprovalDecision:
        """``question`` on the terminal, and its answer: y once, a the ``grant`` where it is
        offered, anything else no. Without a terminal ``said`` goes to standard error and
        NoApprovalTerminal(``why``) is raised, not DENY answered, so the model is told the
        truth: nobody was asked."""
        try:
            fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        except OSError:
            self.err.write(f"zcoder: {said}\n")
            self.err.flush()
            raise NoApprovalTerminal(why) from None
        try:
            os.write(fd, question.encode())
            answer = (await _read_line(fd)).strip().lower()
        finally:
            os.close(fd)
        if answer in ("y", "yes"):
            return ApprovalDecision.ONCE
        if answer in ("a", "all") and grant:
            return ApprovalDecision.ALWAYS
        return ApprovalDecision.DENY


async def _read_line(fd: int) -> str:
    """One line from a terminal, read as it becomes readable; cancellable at any time."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    data = bytearray()

    def readable() -> None:
        try:
            chunk = os.read(fd, 1024)
        except BlockingIOError:
            return
        except OSError as exc:
            if not done.done():
                done.set_exception(exc)
            return
        data.extend(chunk)
        if (not chunk or b"\n" in chunk) and not done.done():
            done.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await done
    except OSError:
        return ""  # the terminal went away: no answer, so a denial
    finally:
        loop.remove_reader(fd)
    return data.split(b"\n", 1)[0].decode("utf-8", errors="replace")
