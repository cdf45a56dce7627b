"""Slash commands: parsing and the help text. The app carries them out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from zcoder.tui.widgets import SIDEBAR_MIN_TERMINAL_WIDTH

COMMANDS: Final = {
    "/help": "show this help",
    "/new": "start a new session (idle only)",
    "/sessions [all]": "list the sessions with their ids (zcoder --resume ID) and focus the"
    " list; all: with those of --prompt runs",
    "/model [NAME]": "switch model; without NAME, pick from Ollama's list (idle only)",
    "/context": "how full the context window is, and what fills it",
    "/output": "the whole output of the last command (also Ctrl+T)",
    "/compact [FOCUS]": "replace older history with a summary the model writes (idle only)",
    "/diff": "the files changed this session: the net diff of each",
    "/undo": "restore the files the last turn changed, after asking (idle only)",
    "/list-agents": "list the other zcoder instances on this machine (no model request)",
    "/agents": "this instance's relay status",
    "/inbox [N]": "messages sent and received here, newest first, with their state and receipt",
    "/rename NAME": "this instance's name for other agents (default: the project's)",
    "/agents pause": "refuse new relayed messages (queued ones are kept)",
    "/agents resume": "accept relayed messages again",
    "/agents continue": "run the relayed tasks that wait for you (also F2)",
    "/agents held": "messages held for you (ZCODER_RELAY_INBOUND=hold, or no trust yet)",
    "/agents run N | discard N": "run a held message now, or drop it (its sender is told)",
    "/agents trust | block | forget NAME": "a policy for that peer's workspace, kept",
    "/agents recover [discard]": "run (or drop) what a crashed zcoder here left unrun",
    "/copy": "copy the last reply, as the model wrote it, to the clipboard (OSC 52)",
    "/quit": "leave zcoder",
    "!COMMAND": "run a shell command here, unasked; its output is context for your next prompt",
}

ALIASES: Final = {
    "/exit": "/quit",
    "/q": "/quit",
    "/clear": "/new",  # as in Claude Code: a fresh conversation; the old one stays saved
    "/?": "/help",
}
"""Other names of commands, shown in the help."""

KEYS: Final = {
    "Enter": "send; while a turn runs, it is queued (shown above the prompt)",
    "Up (empty prompt)": "take the last queued prompt back to edit; clear it to cancel",
    "Up, Down": "earlier prompts of this workspace (kept across runs); Down ends at your draft",
    "Ctrl+R": "search earlier prompts as you type; Ctrl+R older, Enter edits, Esc cancels",
    "Tab": "complete a /command or a path in the workspace; Tab again steps through choices",
    "Shift+Enter, Alt+Enter, Ctrl+J": "new line (Ctrl+Enter too); so does \\ then Enter",
    "Paste": "inserted as text, never sent; a long one shows as [pasted N lines #k]",
    "Ctrl+E (on a pasted block)": "expand it to its text (Backspace removes it whole)",
    "PageUp/Down, Shift+Up/Down": "scroll the transcript (a page, 3 rows), also from the prompt",
    "Escape": "stop the running turn or command (the draft and the queued prompts are kept)",
    "Ctrl+T": "the whole output of the last command (p/n: older/newer, Esc closes)",
    "F2": "run the relayed tasks that wait for you (shown only then)",
    "Ctrl+N": "new session",
    "Ctrl+O": "model picker",
    "Ctrl+B": f"hide or show the sessions list (hidden below {SIDEBAR_MIN_TERMINAL_WIDTH} columns)",
    "Ctrl+C": "clear the draft (Up brings it back); else stop the turn or close the dialog"
    " (refusing); again within 2 s, or when idle, quit",
    "Ctrl+Q": "quit",
}


@dataclass(frozen=True)
class SlashCommand:
    name: str  # e.g. "/model"
    argument: str  # the rest of the line, stripped


def parse_slash(text: str) -> SlashCommand | None:
    """A slash command when the whole input is one; None for an ordinary prompt."""
    stripped = text.strip()
    if not stripped.startswith("/") or "\n" in stripped or stripped.startswith("//"):
        return None
    name, _, rest = stripped.partition(" ")
    name = name.lower()
    return SlashCommand(ALIASES.get(name, name), rest.strip())


def parse_user_command(text: str) -> str | None:
    """The shell command of ``!command`` input ("" for a lone ``!``); None for other input."""
    stripped = text.strip()
    if not stripped.startswith("!"):
        return None
    return stripped[1:].strip()


def help_text() -> str:
    width = max(len(k) for k in (*COMMANDS, *KEYS)) + 2
    lines = ["Commands:"]
    lines += [f"  {name.ljust(width)}{what}" for name, what in COMMANDS.items()]
    lines.append("Aliases:")
    lines += [
        f"  {alias.ljust(width)}{command}"
        + (" (a new session; the current one stays saved)" if command == "/new" else "")
        for alias, command in ALIASES.items()
    ]
    lines.append("Keys:")
    lines += [f"  {key.ljust(width)}{what}" for key, what in KEYS.items()]
    return "\n".join(lines)
