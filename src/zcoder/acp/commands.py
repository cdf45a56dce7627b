"""zcoder's slash commands in an editor: the ones that mean something without the TUI, as
ACP's available commands, carried out when a prompt starts with one.

The one command registry (tui/command_registry.py) belongs to the TUI: its commands are
methods of the TUI's classes, and reading it imports them, and Textual with them, which
the ``--acp`` path does not load. So this table lists the commands an editor gets, with
the registry's own usage and help (tests/acp/test_commands.py holds the two together),
and carries them out on the session:

- ``/help``, ``/context``, ``/diff``, ``/list-agents``: answered at once, with no request
  to the model and nothing added to the conversation;
- ``/compact [FOCUS]``: a turn of its own (it asks the model for the summary).

Left out, and why: ``/model`` (the editor starts zcoder with ``-m``), ``/new`` and the
session commands (the editor opens, lists and loads sessions), ``/undo`` (it asks in a
dialog of the TUI's), ``/copy`` and ``/output`` (the editor shows and copies replies and
output itself), ``/quit`` (the editor ends the agent), ``/rename``, ``/agents`` and
``/inbox`` (the relay's controls, the TUI's for now). A prompt that starts with any other
``/word`` is a custom command's or a skill's (zcoder.acp.user_commands), or goes to the
model as it is (it may be a path).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from zcoder.agent.usage import render_breakdown
from zcoder.model import ModelError
from zcoder.relay import peer_table
from zcoder.tools.offload import StopSignal, in_thread

if TYPE_CHECKING:
    from zcoder.acp.relay import SessionRelay
    from zcoder.agent import Agent


class AcpSession(Protocol):
    """What the commands use of the session (zcoder.acp.session.AcpSession)."""

    relay: SessionRelay | None
    window_source: str | None

    def started_agent(self) -> Agent: ...

    async def size_window(self) -> None: ...


@dataclass(frozen=True)
class AcpCommand:
    usage: str  # as the registry's Form has it: "/compact [FOCUS]"
    help: str  # the registry's help for that form
    run: Callable[[AcpSession, str], Awaitable[str]]
    """Carries it out; what it returns is the answer shown in the editor."""
    turn: bool = False  # a turn of its own (it waits for the running one)

    @property
    def name(self) -> str:
        """ACP's name: without the slash (the editor shows ``/name``)."""
        return self.usage.split()[0].removeprefix("/")

    @property
    def hint(self) -> str | None:
        """What to type after the name, when the usage takes something."""
        rest = self.usage.split(maxsplit=1)[1:]
        return rest[0] if rest else None

    def available(self) -> AvailableCommand:
        hint = self.hint
        return AvailableCommand(
            name=self.name,
            description=self.help,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
        )


async def _help(_session: AcpSession, _argument: str) -> str:
    width = max(len(c.usage) for c in COMMANDS) + 2
    lines = ["zcoder's commands here:"]
    lines += [f"  {c.usage.ljust(width)}{c.help}" for c in COMMANDS]
    return "```\n" + "\n".join(lines) + "\n```"


async def _context(session: AcpSession, _argument: str) -> str:
    await session.size_window()  # asks the model server its window (no chat request)
    agent = session.started_agent()
    text = render_breakdown(agent.context_breakdown(), session.window_source)
    return f"```\n{text}\n```"


async def _diff(session: AcpSession, _argument: str) -> str:
    agent = session.started_agent()
    # Reading every changed file and diffing it is file-system work: off the loop.
    diff = await in_thread(StopSignal(), agent.edits.session_diff, name="diff")
    if not diff.diffs:
        return (
            "No file changes in this session to show (edits made by run_command are "
            "not tracked; undone ones are gone)."
        )
    lines = [line for d in diff.diffs for line in d.lines]
    return f"{diff.header}\n\n```diff\n" + "\n".join(lines) + "\n```"


async def _list_agents(session: AcpSession, _argument: str) -> str:
    import asyncio  # noqa: PLC0415

    relay = session.relay
    if relay is None:
        return "Agent relay is unavailable in this session (see zcoder.log for why)."
    found = await asyncio.to_thread(relay.relay.discover)
    if found.error:
        return f"Agent discovery failed: {found.error}"
    return f"```\n{peer_table(found.peers)}\n```"


async def _compact(session: AcpSession, focus: str) -> str:
    try:
        result = await session.started_agent().compact(focus)
    except ModelError as exc:
        return f"Compaction failed, nothing was changed: {exc}"
    return result.text if result.compacted else f"Nothing compacted: {result.text}."


COMMANDS: Final = (
    AcpCommand("/help", "show this help", _help),
    AcpCommand("/context", "how full the context window is, and what fills it", _context),
    AcpCommand(
        "/compact [FOCUS]",
        "replace older history with a summary the model writes (idle only)",
        _compact,
        turn=True,
    ),
    AcpCommand(
        "/diff",
        "show every file the agent changed this session, as one diff per file: from before"
        " its first edit to what is on disk now",
        _diff,
    ),
    AcpCommand(
        "/list-agents",
        "list the other zcoder instances on this machine (no model request)",
        _list_agents,
    ),
)


def available_commands() -> list[AvailableCommand]:
    return [command.available() for command in COMMANDS]


def find_command(text: str) -> tuple[AcpCommand, str] | None:
    """The command a prompt starts with, and its argument; None when it starts with none."""
    if not text.startswith("/"):
        return None
    name, _, argument = text.strip().partition(" ")
    for command in COMMANDS:
        if command.usage.split()[0] == name.lower():
            return command, argument.strip()
    return None
