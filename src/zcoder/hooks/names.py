"""zcoder's tools under the names Claude Code hooks already match.

A user's hooks were written for Claude Code: ``"matcher": "Bash"``, a script reading
``.tool_input.file_path``. So a matcher is tested against both a tool's zcoder name and its
Claude Code name, and the hook's ``tool_input`` carries zcoder's arguments plus the Claude
Code field names for the same values. A hook written for either works unchanged.
"""

from __future__ import annotations

from typing import Any, Final

# zcoder's tool -> Claude Code's tool of the same job.
CLAUDE_NAMES: Final = {
    "run_command": "Bash",
    "read_file": "Read",
    "read_file_range": "Read",
    "write_file": "Write",
    "replace_text": "Edit",
    "apply_patch": "Edit",
    "list_files": "LS",
    "search": "Grep",
}
# zcoder's argument -> Claude Code's name for it, per tool (only where they differ).
_FIELD_ALIASES: Final = {"path": "file_path"}


def names_of_tool(name: str) -> tuple[str, ...]:
    """The names a matcher is tested against: zcoder's, then Claude Code's if it has one."""
    claude = CLAUDE_NAMES.get(name)
    return (name, claude) if claude else (name,)


def hook_tool_input(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as a hook sees them: zcoder's, plus Claude Code's field names."""
    shown = dict(arguments)
    if name in CLAUDE_NAMES:
        for field, alias in _FIELD_ALIASES.items():
            if field in arguments and alias not in arguments:
                shown[alias] = arguments[field]
    return shown
