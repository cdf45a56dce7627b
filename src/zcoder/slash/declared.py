"""zcoder's own slash commands, each declared once, in the order /help lists them.

A class here declares the commands of one concern and is their owner type: a front end
carries a command out on the object it registers of that type (zcoder.slash.owners),
whose class subclasses the one here and overrides the method (the TUI's SlashCommands,
SessionsUI, ...; an editor's EditorCommands, zcoder.acp.commands; ``--connect``'s
remote parts). A declaration says where the command applies: a front end it applies to
must have an owner for it (tests/slash/test_owners.py walks every declaration), and one
it does not apply to never offers it (``--connect`` says why: ``remote_refusal``, else
that it acts on this machine's zcoder). The method bodies here are empty: what a command
does is each front end's; its words (usage, help) are these.
"""

from __future__ import annotations

from typing import Final

from zcoder.slash.registry import (
    EVERYWHERE,
    Form,
    FrontEnd,
    Needs,
    Reply,
    declares_commands,
    slash_command,
)

__all__ = [
    "AppCommands",
    "EditCommands",
    "GoalCommands",
    "HelperCommands",
    "InboxCommands",
    "InstructionCommands",
    "JobCommands",
    "McpCommands",
    "ModeCommands",
    "ModelCommands",
    "QueueCommands",
    "QuitCommands",
    "RelayCommands",
    "RewindCommands",
    "SessionCommands",
    "SkillCommands",
    "TaskCommands",
    "TeamCommands",
]

TUI: Final = FrontEnd.TUI
EDITOR: Final = FrontEnd.EDITOR
REMOTE: Final = FrontEnd.REMOTE
EDITS_ELSEWHERE: Final = "the edits are on the remote host, in its workspace"
HELPERS_ELSEWHERE: Final = "a helper would run in the remote host's workspace: use it there"


@declares_commands
class AppCommands:
    """The front end as a whole: its help, the context window, output, compaction."""

    @slash_command(Form("/help", "show this help"), where=EVERYWHERE, aliases=("/?",))
    def help_command(self, argument: str, /) -> Reply:
        """The commands of this front end, with their help."""

    @slash_command(
        Form("/context", "how full the context window is, and what fills it"),
        where=TUI | EDITOR,
        needs=Needs.AGENT,
        remote_refusal="the context window and what fills it are on the remote host (the "
        "header's meter shows how full it is)",
    )
    def context_command(self, argument: str, /) -> Reply:
        """What fills the next request's context window, by kind."""

    @slash_command(
        Form("/output", "the last command's whole output, or tool call's arguments (Ctrl+T)"),
        where=TUI | REMOTE,
    )
    def output_command(self, argument: str, /) -> Reply:
        """The last command's whole output."""

    @slash_command(
        Form(
            "/compact [FOCUS]",
            "replace older history with a summary the model writes (idle only)",
        ),
        where=TUI | EDITOR,
        needs=Needs.AGENT | Needs.MODEL,
        remote_refusal="compaction is the remote agent's (it compacts by itself when the "
        "window fills)",
    )
    def compact_command(self, argument: str, /) -> Reply:
        """Replace older history with the model's summary, focused on ``argument``."""

    @slash_command(
        Form("/copy", "copy the last reply, as the model wrote it, to the clipboard (OSC 52)"),
        where=TUI | REMOTE,
    )
    def copy_command(self, argument: str, /) -> Reply:
        """The last reply to the clipboard."""


@declares_commands
class SessionCommands:
    """The sessions of this workspace: a new one, the list, opening one."""

    @slash_command(
        Form("/new", "start a new session (idle only)"),
        where=TUI | REMOTE,
        needs=Needs.STORE,
        aliases=("/clear",),  # as in Claude Code: a fresh conversation; the old one stays saved
        alias_note="a new session; the current one stays saved",
    )
    def new_command(self, argument: str, /) -> Reply:
        """Start a new session."""

    @slash_command(
        Form(
            "/sessions [all | ID]",
            "list the sessions with their ids (zcoder --resume ID); all: with those of"
            " --prompt runs; ID (a unique prefix is enough): open that one",
        ),
        where=TUI | REMOTE,
        needs=Needs.STORE,
    )
    def sessions_command(self, argument: str, /) -> Reply:
        """List the sessions, or open the one ``argument`` names."""


@declares_commands
class QueueCommands:
    """The user's input waiting for the agent: steering and follow-ups."""

    @slash_command(
        Form("/queue", "what waits: steering for the running turn, follow-ups after it"),
        Form("/queue drop N", "drop waiting input N"),
        Form("/queue resume", "run what a stopped turn (or a crash) left held"),
        where=TUI | REMOTE,
    )
    def queue_command(self, argument: str, /) -> Reply:
        """List the waiting input, or a control (``argument``) of it."""


@declares_commands
class JobCommands:
    """Commands run in the background (run_command's ``background``, tools/jobs.py)."""

    @slash_command(
        Form("/jobs", "background commands: their state and last lines"),
        Form("/jobs stop N", "stop background job N and what it started"),
        where=TUI,
        remote_refusal="background commands run on the remote host, and end with its zcoder",
    )
    def jobs_command(self, argument: str, /) -> Reply:
        """List the jobs, or stop the one ``argument`` names."""


@declares_commands
class GoalCommands:
    """A goal zcoder works toward turn after turn, until an independent check accepts it."""

    @slash_command(
        Form("/goal OBJECTIVE [--tokens N]", "work toward OBJECTIVE until a check accepts it"),
        Form("/goal status", "the goal, its turns and the tokens it spent"),
        Form("/goal pause", "stop after the running turn (Escape stops that too)"),
        Form("/goal resume [--tokens N]", "go on with a paused goal (N: a larger budget)"),
        Form("/goal clear", "drop the goal"),
        where=TUI,
        needs=Needs.AGENT | Needs.MODEL,
    )
    def goal_command(self, argument: str, /) -> Reply:
        """Start, show or control the goal."""


@declares_commands
class ModeCommands:
    """The permission mode (zcoder.tools.modes)."""

    @slash_command(
        Form("/mode [NAME]", "the permission mode: ask, accept-edits or plan (Shift+Tab cycles)"),
        where=TUI,
        needs=Needs.AGENT,
        remote_refusal="the permission mode is the remote zcoder's (its --mode)",
    )
    def mode_command(self, argument: str, /) -> Reply:
        """Show the mode, or switch to mode ``argument``."""


@declares_commands
class ModelCommands:
    """The model in use."""

    @slash_command(
        Form("/model [NAME]", "switch model; without NAME, pick from Ollama's list (idle only)"),
        where=TUI,
        needs=Needs.MODEL,
        remote_refusal="the model is the remote zcoder's (its ZCODER_MODEL, or -m in "
        "ZCODER_REMOTE_COMMAND)",
    )
    def model_command(self, argument: str, /) -> Reply:
        """Switch to the model ``argument`` names, or pick one."""


@declares_commands
class EditCommands:
    """The files the agent changed this session."""

    @slash_command(
        Form(
            "/diff",
            "show every file the agent changed this session, as one diff per file: from "
            "before its first edit to what is on disk now",
        ),
        where=TUI | EDITOR,
        needs=Needs.AGENT,
        remote_refusal=EDITS_ELSEWHERE,
    )
    def show_diff(self, argument: str, /) -> Reply:
        """The session's changes, one diff per file."""

    @slash_command(
        Form("/undo", "restore the files the last turn changed, after asking (idle only)"),
        where=TUI,
        needs=Needs.AGENT,
        remote_refusal=EDITS_ELSEWHERE,
    )
    def undo(self, argument: str, /) -> Reply:
        """Restore the files the last turn changed."""


@declares_commands
class RelayCommands:
    """The agent relay: the other instances, this one's peer."""

    @slash_command(
        Form("/list-agents", "list the other zcoder instances on this machine (no model request)"),
        where=EVERYWHERE,
        needs=Needs.RELAY,
    )
    def list_agents(self, argument: str, /) -> Reply:
        """The other zcoder instances the relay finds."""

    @slash_command(
        Form("/agents", "this instance's relay status"),
        Form("/agents pause", "refuse new relayed messages (queued ones are kept)"),
        Form("/agents resume", "accept relayed messages again"),
        Form("/agents continue", "run the relayed tasks that wait for you (also F2)"),
        Form("/agents held", "messages held for you (ZCODER_RELAY_INBOUND=hold, or no trust yet)"),
        Form(
            "/agents run N | discard N", "run a held message now, or drop it (its sender is told)"
        ),
        Form("/agents trust | block | forget NAME", "a policy for that peer's workspace, kept"),
        Form("/agents recover [discard]", "run (or drop) what a crashed zcoder here left unrun"),
        where=TUI | REMOTE,
        needs=Needs.RELAY,
    )
    def agents_command(self, argument: str, /) -> Reply:
        """The relay's status and controls (``argument``: the control and its value)."""

    @slash_command(
        Form("/rename NAME", "this instance's name for other agents (default: the project's)"),
        where=TUI,
        needs=Needs.RELAY,
        remote_refusal="this zcoder publishes no relay peer: the remote host's zcoder is the agent",
    )
    def rename(self, argument: str, /) -> Reply:
        """This instance's name for its peers."""


@declares_commands
class InboxCommands:
    """The relay's history: messages sent and received here."""

    @slash_command(
        Form(
            "/inbox [N]",
            "messages sent and received here, newest first, with their state and receipt",
        ),
        where=TUI,
        needs=Needs.RELAY | Needs.STORE,
    )
    def command(self, argument: str, /) -> Reply:
        """The history, newest first; ``argument`` N: one entry whole."""


@declares_commands
class McpCommands:
    """The MCP servers."""

    @slash_command(
        Form("/mcp", "the MCP servers: state (and why), where configured, their tools"),
        Form("/mcp reload", "read the MCP configuration again: added, removed, changed"),
        Form("/mcp reconnect NAME", "stop an MCP server and start it again"),
        Form(
            "/mcp enable NAME | disable NAME",
            "turn an MCP server on or off in this workspace (kept for later sessions)",
        ),
        where=TUI,
        needs=Needs.AGENT,
    )
    def mcp_command(self, argument: str, /) -> Reply:
        """The servers' state, or a control (``argument``) of one."""


@declares_commands
class QuitCommands:
    """Leaving zcoder."""

    @slash_command(Form("/quit", "leave zcoder"), where=TUI | REMOTE, aliases=("/exit", "/q"))
    def quit_command(self, argument: str, /) -> Reply:
        """Quit (asking first when relayed messages would be dropped)."""


@declares_commands
class SkillCommands:
    """Skills (and custom commands: they are added at run time, as extensions)."""

    @slash_command(
        Form("/skills", "the skills: where each came from, which are active"),
        Form("/skills reload", "read the skills and custom commands again"),
        where=TUI,
    )
    def skills_command(self, argument: str, /) -> Reply:
        """The skills, or ``reload``: read them again."""

    @slash_command(
        Form("/skill NAME [TEXT]", "activate the skill NAME, then send TEXT (also $NAME TEXT)"),
        where=TUI,
        needs=Needs.MODEL,
    )
    def skill_command(self, argument: str, /) -> Reply:
        """Activate a skill, then send the text after its name."""


@declares_commands
class RewindCommands:
    """Going back to an earlier prompt of the session, and branching a session off."""

    @slash_command(
        Form(
            "/rewind",
            "go back to before one of your earlier prompts: the conversation, its files, or"
            " both, after a preview (also Escape twice on an empty prompt; idle only)",
        ),
        where=TUI,
        needs=Needs.AGENT,
        remote_refusal="rewinding is not offered over --connect: the conversation and its "
        "files are the remote host's (run zcoder there to rewind)",
    )
    def rewind_command(self, argument: str, /) -> Reply:
        """List the user's earlier prompts; the one chosen is rewound to."""

    @slash_command(
        Form("/fork [TITLE]", "a new session from this one's history; this one stays as it is"),
        where=TUI,
        needs=Needs.AGENT | Needs.STORE,
        remote_refusal="forking is not offered over --connect: the sessions are the remote "
        "host's (zcoder --fork ID there)",
    )
    def fork_command(self, argument: str, /) -> Reply:
        """Open a copy of this session, titled ``argument`` (else "fork of" its title)."""


@declares_commands
class InstructionCommands:
    """The instruction files the model follows (AGENTS.md, CLAUDE.md: agent/instructions.py)."""

    @slash_command(
        Form(
            "/instructions",
            "the instruction files loaded, in order, with their sizes, and what was not read",
        ),
        where=TUI | EDITOR,
        needs=Needs.AGENT,
        remote_refusal="the instruction files are the remote host's (zcoder "
        "--print-instructions there lists them)",
    )
    def instructions_command(self, argument: str, /) -> Reply:
        """What was loaded from where, in order, with sizes; what was skipped and why."""

    @slash_command(
        Form(
            "/init [FOCUS]", "the model drafts an AGENTS.md here; you see it before it is written"
        ),
        where=TUI | EDITOR,
        needs=Needs.AGENT | Needs.MODEL,
        remote_refusal="/init writes the remote workspace's AGENTS.md: run it there",
    )
    def init_command(self, argument: str, /) -> Reply:
        """A turn drafts the workspace's AGENTS.md; written only when the user says yes."""


@declares_commands
class HelperCommands:
    """Other coding agents as helpers (zcoder.tools.helpers): Claude Code, Codex, opencode."""

    @slash_command(
        Form("/claude TASK", "hand TASK to Claude Code (asked first; it runs on its own terms)"),
        where=TUI,
        needs=Needs.AGENT,
        remote_refusal=HELPERS_ELSEWHERE,
    )
    def claude_command(self, argument: str, /) -> Reply:
        """Run Claude Code's non-interactive mode on the task, here."""

    @slash_command(
        Form("/codex TASK", "hand TASK to Codex (asked first; it runs on its own terms)"),
        where=TUI,
        needs=Needs.AGENT,
        remote_refusal=HELPERS_ELSEWHERE,
    )
    def codex_command(self, argument: str, /) -> Reply:
        """Run Codex's non-interactive mode on the task, here."""

    @slash_command(
        Form("/opencode TASK", "hand TASK to opencode (asked first; it runs on its own terms)"),
        where=TUI,
        needs=Needs.AGENT,
        remote_refusal=HELPERS_ELSEWHERE,
    )
    def opencode_command(self, argument: str, /) -> Reply:
        """Run opencode's non-interactive mode on the task, here."""

    @slash_command(
        Form("/helpers", "which coding agents /claude, /codex and /opencode find installed"),
        where=TUI,
        remote_refusal=HELPERS_ELSEWHERE,
    )
    def helpers_command(self, argument: str, /) -> Reply:
        """Each helper: installed (its version) or not, and whether it is turned off."""


@declares_commands
class TeamCommands:
    """Workers in their own git worktrees and tmux windows (zcoder.team)."""

    @slash_command(
        Form(
            "/spawn NAME TASK",
            "start a worker zcoder in a new tmux window and git worktree (branch zcoder/NAME)"
            " and hand it TASK through the relay",
        ),
        where=TUI,
        needs=Needs.RELAY,
        remote_refusal="workers start on the remote host: run zcoder there, in tmux",
    )
    def spawn_command(self, argument: str, /) -> Reply:
        """Start the worker ``argument`` names, with its task."""

    @slash_command(
        Form("/team", "the workers spawned here: activity, branch, last receipts"),
        Form("/team merge NAME", "the worker's diff, whether it merges cleanly; y merges it"),
        Form("/team stop NAME [remove]", "end the worker; remove: its worktree too"),
        where=TUI,
        needs=Needs.RELAY,
        remote_refusal="the team is the remote host's: run zcoder there, in tmux",
    )
    def team_command(self, argument: str, /) -> Reply:
        """List the workers, or merge or stop one."""


@declares_commands
class TaskCommands:
    """The repository's task board, shared by every agent working in it (zcoder.board)."""

    @slash_command(
        Form("/tasks", "the task board of this repository: tasks, claims, dependencies"),
        Form("/tasks add TITLE", "add a task to the board"),
        Form("/tasks done N", "mark task N done (unless a live agent holds it)"),
        where=TUI | EDITOR,
        remote_refusal="the task board is the remote repository's: zcoder tasks there",
    )
    def tasks_command(self, argument: str, /) -> Reply:
        """List the board, or add or settle a task (``argument``)."""
