"""Slash commands as typed: parsing them, and the keys /help lists after them.

The commands themselves, with their help, are declared once for every front end
(slash/declared.py) and collected in one registry (slash/registry.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from zcoder.tui.widgets.shared import SIDEBAR_MIN_TERMINAL_WIDTH

KEYS: Final = {  # shown by /help, after the commands
    "Enter": "send; while a turn runs, steer it (at its next safe point; shown above the prompt)",
    "Ctrl+G": "while a turn runs, queue a follow-up for after it (idle: send)",
    "Up (empty prompt)": "take the last waiting input back to edit; clear it to cancel",
    "Up, Down": "earlier prompts of this workspace (kept across runs); Down ends at your draft",
    "Ctrl+R": "search earlier prompts as you type; Ctrl+R older, Enter edits, Esc cancels",
    "Tab": "complete a /command or a path in the workspace; Tab again steps through choices",
    "Shift+Tab": "switch the mode: ask → accept edits → plan (read-only) → ask",
    "Shift+Enter, Alt+Enter, Ctrl+J": "new line (Ctrl+Enter too); so does \\ then Enter",
    "Paste": "inserted as text, never sent; a long one shows as [pasted N lines #k]",
    "Ctrl+E (on a pasted block)": "expand it to its text (Backspace removes it whole)",
    "PageUp/Down, Shift+Up/Down": "scroll the transcript (a page, 3 rows), also from the prompt",
    "Escape": "stop the running turn or command (the draft is kept; what waits is held:"
    " /queue resume)",
    "Ctrl+T": "the last command's whole output, or tool call's arguments (p/n: older/newer)",
    "Ctrl+F": "unfold (or fold) the subagents' entries: each call they made, their reports",
    "F2": "run the relayed tasks that wait for you (shown only then)",
    "Ctrl+N": "new session",
    "Ctrl+O": "model picker",
    "Ctrl+B": f"hide or show the sessions list (hidden below {SIDEBAR_MIN_TERMINAL_WIDTH} columns)",
    "Ctrl+C": "clear the draft (Up brings it back); else stop the turn or close the dialog"
    " (refusing), or say that a second quits; again within 2 s: quit",
    "Ctrl+Q": "quit",
}


@dataclass(frozen=True)
class SlashCommand:
    name: str  # e.g. "/model", or an alias ("/q"): the registry resolves it
    argument: str  # the rest of the line, stripped


def parse_slash(text: str) -> SlashCommand | None:
    """A slash command when the whole input is one; None for an ordinary prompt."""
    stripped = text.strip()
    if not stripped.startswith("/") or "\n" in stripped or stripped.startswith("//"):
        return None
    name, _, rest = stripped.partition(" ")
    name = name.lower()
    return SlashCommand(name, rest.strip())


def parse_user_command(text: str) -> str | None:
    """The shell command of ``!command`` input ("" for a lone ``!``); None for other input."""
    stripped = text.strip()
    if not stripped.startswith("!"):
        return None
    return stripped[1:].strip()
