"""What heads a tool call wherever it is shown: what a person reads, not its raw JSON.

``Write q.sql``, ``Search "TODO" in src``, ``Message to weekly-digest``, ``git: git_log
/repo``; a command is headed by the command itself. The TUI's transcript, an editor's tool
call title (ACP) and ``--connect``'s view all call :func:`call_heading`; the whole
arguments stay one key away in each (the TUI's Ctrl+T, the editor's raw input).

The text is not escaped here: each front end makes it safe for its own screen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from zcoder.mcp.config import split_tool_name

# The names of tools defined elsewhere, written out: importing their modules (the MCP
# client's, the skills', the relay tools') would cost the TUI's first frame a third of a
# second. tests/agent/test_headings.py holds them equal to the modules' own.
SEND_AGENT_MESSAGE: Final = "send_agent_message"
TARGET: Final = "target_instance_id"
TARGET_ALIAS: Final = "target"
LIST_AGENTS: Final = "list_agents"
ACTIVATE_SKILL: Final = "activate_skill"
READ_SKILL_FILE: Final = "read_skill_file"
LOAD_TOOL: Final = "load_tools"
FINISH_TOOL_NAME: Final = "finish"
TASK_TOOL: Final = "task"

_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.-]+")
"""What a tool's name looks like (an MCP tool's too: mcp__SERVER__TOOL)."""

MAX_DETAIL_CHARS: Final = 120
"""A heading's argument is cut here (its first line); the whole is a key away."""

VERBS: Final[dict[str, str]] = {
    "read_file": "Read",
    "read_file_range": "Read",
    "list_files": "List",
    "write_file": "Write",
    "replace_text": "Edit",
    "search": "Search",
    "apply_patch": "Patch",
    SEND_AGENT_MESSAGE: "Message",
    LIST_AGENTS: "List agents",
    ACTIVATE_SKILL: "Use skill",
    READ_SKILL_FILE: "Read skill file",
    LOAD_TOOL: "Load tools",
    FINISH_TOOL_NAME: "Finish",
    TASK_TOOL: "Subagent",
}
"""How each of zcoder's own tools' headings begin (``--connect`` reads a remote call's
tool back from it: :func:`tool_from_heading`)."""

_PATH_TOOLS: Final = ("read_file", "read_file_range", "list_files", "write_file", "replace_text")

# The arguments that say most about a call of a tool zcoder does not know (an MCP
# server's), looked for in this order; else the first text argument.
_TELLING: Final = (
    "path",
    "file_path",
    "file",
    "filename",
    "repo_path",
    "directory",
    "command",
    "cmd",
    "query",
    "pattern",
    "url",
    "uri",
    "name",
    "target",
    "id",
)


def _short(value: object) -> str:
    text = value if isinstance(value, str) else str(value)
    first, _, rest = text.strip().partition("\n")
    if len(first) > MAX_DETAIL_CHARS:
        return first[: MAX_DETAIL_CHARS - 1] + "…"
    return first + (" …" if rest.strip() else "")


def _text(arguments: Mapping[str, Any], key: str) -> str:
    value = arguments.get(key)
    return _short(value) if isinstance(value, str | int | float) and str(value) else ""


def telling_argument(arguments: Mapping[str, Any]) -> str:
    """The one argument that says most about a call (see ``_TELLING``), shortened."""
    for key in _TELLING:
        if found := _text(arguments, key):
            return found
    for value in arguments.values():
        if isinstance(value, str) and value.strip():
            return _short(value)
    return ""


def _patched_paths(patch: str) -> list[str]:
    paths = []
    for line in patch.splitlines():
        if line.startswith("+++ ") and not line.startswith("+++ /dev/null"):
            path = line[4:].split("\t", 1)[0].strip()
            path = path[2:] if path.startswith("b/") else path
            if path and path not in paths:
                paths.append(path)
    return paths


def _joined(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def call_heading(name: str, arguments: Mapping[str, Any]) -> str:
    """What heads a call of ``name`` with ``arguments``: a verb and what it acts on, the
    command for run_command, ``SERVER: TOOL`` and its most telling argument for an MCP
    tool."""
    if name == "run_command":
        command = str(arguments.get("command") or name)
        cwd = _text(arguments, "cwd")
        return command + (f" (in {cwd})" if cwd and cwd != "." else "")
    verb = VERBS.get(name, "")
    if name in _PATH_TOOLS:
        path = _text(arguments, "path") or ("." if name == "list_files" else "")
        heading = _joined(verb, path)
        start, end = arguments.get("start_line"), arguments.get("end_line")
        if name.startswith("read_file") and start is not None:
            heading += f" (lines {start}–{end})" if end is not None else f" (from line {start})"
        return heading
    if name == "search":
        query = _text(arguments, "query")
        where = _text(arguments, "path")
        heading = _joined(verb, f'"{query}"' if query else "")
        return heading + (f" in {where}" if where and where != "." else "")
    if name == "apply_patch":
        paths = _patched_paths(str(arguments.get("patch") or ""))
        return _joined(verb, ", ".join(paths)) if paths else f"{verb} (no file named)"
    if name == SEND_AGENT_MESSAGE:
        target = _text(arguments, TARGET) or _text(arguments, TARGET_ALIAS)
        return _joined(verb, f"to {target}" if target else "")
    if name == READ_SKILL_FILE:
        skill, path = _text(arguments, "skill"), _text(arguments, "path")
        return _joined(verb, f"{skill}/{path}" if skill and path else skill or path)
    if name == FINISH_TOOL_NAME:
        status = _text(arguments, "status")
        return f"{verb} ({status})" if status else verb
    detail = {ACTIVATE_SKILL: "name", LOAD_TOOL: "name", TASK_TOOL: "description"}
    if name in detail:
        return _joined(verb, _text(arguments, detail[name]))
    if name == LIST_AGENTS:
        return verb
    if not _TOOL_NAME.fullmatch(name):
        return name  # already a heading: a remote call whose tool is not one of zcoder's
    mcp = split_tool_name(name)
    shown = f"{mcp[0]}: {mcp[1]}" if mcp is not None else name
    return _joined(shown, telling_argument(arguments))


def tool_from_heading(heading: str) -> str | None:
    """The tool of zcoder's that a heading made by :func:`call_heading` begins with (the
    longest beginning that fits; ``Read`` is read_file or its range, headed alike), or
    None."""
    fits = [
        (len(start), name)
        for name, start in VERBS.items()
        if heading == start or heading.startswith(start + " ")
    ]
    return max(fits, key=lambda fit: fit[0])[1] if fits else None
