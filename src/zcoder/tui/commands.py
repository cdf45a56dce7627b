"""Slash commands: parsing and the help text. The app carries them out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

COMMANDS: Final = {
    "/help": "show this help",
    "/new": "start a new session (idle only)",
    "/sessions": "show and focus the sessions list",
    "/model [NAME]": "switch model; without NAME, pick from Ollama's list (idle only)",
    "/context": "how full the context window is, and what fills it",
    "/compact [FOCUS]": "replace older history with a summary the model writes (idle only)",
    "/list-agents": "list the other zcoder instances on this machine (no model request)",
    "/agents": "this instance's relay status",
    "/agents pause": "refuse new relayed messages (queued ones are kept)",
    "/agents resume": "accept relayed messages again",
    "/agents continue": "run the relayed tasks that wait for you (also F2)",
    "/quit": "leave zcoder",
}

KEYS: Final = {
    "Enter": "send; while a turn runs, it is queued (shown above the prompt)",
    "Up (empty prompt)": "take the last queued prompt back to edit; clear it to cancel",
    "Shift+Enter, Alt+Enter, Ctrl+J": "new line; so does \\ then Enter",
    "Paste": "inserted as text, never sent; a long one shows as [pasted N lines #k]",
    "Ctrl+E (on a pasted block)": "expand it to its text (Backspace removes it whole)",
    "Escape": "stop the running turn (the draft and the queued prompts are kept)",
    "F2": "run the relayed tasks that wait for you (shown only then)",
    "Ctrl+N": "new session",
    "Ctrl+O": "model picker",
    "Ctrl+B": "hide or show the sessions list",
    "Ctrl+Q, Ctrl+C": "quit",
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
    return SlashCommand(name.lower(), rest.strip())


def help_text() -> str:
    width = max(len(k) for k in (*COMMANDS, *KEYS)) + 2
    lines = ["Commands:"]
    lines += [f"  {name.ljust(width)}{what}" for name, what in COMMANDS.items()]
    lines.append("Keys:")
    lines += [f"  {key.ljust(width)}{what}" for key, what in KEYS.items()]
    return "\n".join(lines)
