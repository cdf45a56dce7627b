"""Hooks as users already write them: Claude Code's ``hooks`` block in a settings file.

::

    {"hooks": {"PreToolUse": [{"matcher": "Bash|run_command", "hooks": [
        {"type": "command", "command": "~/bin/check", "timeout": 10}]}]}}

zcoder reads it from ``$ZCODER_HOME/settings.json`` (the user's) and ``.zcoder/settings.json``
in the workspace (the project's: code from the repository, which runs only with the user's
consent). Events are Claude Code's PreToolUse, PostToolUse, UserPromptSubmit, Stop,
SessionStart and PreCompact, and zcoder's own RelayMessage. A block that cannot be used
(an unknown event, a bad matcher, a hook that is not a command) is listed with why and left
out; the rest still load, so one typo never turns every hook off.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from zcoder.base.consent import digest_of
from zcoder.hooks.names import names_of_tool

PRE_TOOL_USE: Final = "PreToolUse"
POST_TOOL_USE: Final = "PostToolUse"
USER_PROMPT_SUBMIT: Final = "UserPromptSubmit"
STOP: Final = "Stop"
SESSION_START: Final = "SessionStart"
PRE_COMPACT: Final = "PreCompact"
RELAY_MESSAGE: Final = "RelayMessage"
EVENTS: Final = (
    PRE_TOOL_USE,
    POST_TOOL_USE,
    USER_PROMPT_SUBMIT,
    STOP,
    SESSION_START,
    PRE_COMPACT,
    RELAY_MESSAGE,
)
# Events whose matcher is tested against a tool's names (zcoder's and Claude Code's).
TOOL_EVENTS: Final = (PRE_TOOL_USE, POST_TOOL_USE)
PROJECT_SETTINGS: Final = Path(".zcoder") / "settings.json"
DEFAULT_TIMEOUT: Final = 60.0
MAX_TIMEOUT: Final = 600.0
# A relayed message waits for its RelayMessage hooks at most this long (a sender's task is
# not to sit unanswered for ten minutes behind a slow hook).
MAX_RELAY_HOOK_SECONDS: Final = 30.0
MAX_SETTINGS_BYTES: Final = 1 << 20


@dataclass(frozen=True)
class HookCommand:
    """One command to run for an event."""

    command: str
    timeout: float
    source: Path  # the settings file it came from
    project: bool  # from the repository (needs the user's consent), not the user's own file
    # What the user's consent is given to (zcoder.hooks.consent): the entry's key (event,
    # matcher, command) and a digest of its whole content; a changed entry asks again.
    key: str = field(default="", compare=False)
    digest: str = field(default="", compare=False)
    event: str = field(default="", compare=False)
    matcher: str = field(default="", compare=False)

    def describe(self) -> str:
        return f"{self.command} (from {self.source})"


@dataclass(frozen=True)
class HookGroup:
    """Commands that run when an event's subject matches ``matcher`` ("" matches all)."""

    matcher: str
    commands: tuple[HookCommand, ...]

    def matches(self, event: str, subject: str) -> bool:
        if self.matcher in ("", "*"):
            return True
        names = names_of_tool(subject) if event in TOOL_EVENTS else (subject,)
        pattern = re.compile(self.matcher)
        return any(pattern.fullmatch(name) for name in names)


@dataclass
class HookSet:
    """Every hook of a workspace, by event, and the blocks that could not be used."""

    groups: dict[str, list[HookGroup]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any(self.groups.values())

    def commands_for(self, event: str, subject: str = "") -> list[HookCommand]:
        """The commands to run for ``event`` on ``subject`` (a tool's name, a source…),
        each once, in the order the files and blocks list them."""
        found: list[HookCommand] = []
        for group in self.groups.get(event, []):
            if group.matches(event, subject):
                found.extend(c for c in group.commands if c not in found)
        return found

    def project_commands(self) -> list[HookCommand]:
        return [
            c for groups in self.groups.values() for g in groups for c in g.commands if c.project
        ]


def _timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return DEFAULT_TIMEOUT
    return float(min(value, MAX_TIMEOUT))


def _group(
    event: str, raw: Any, source: Path, project: bool, problems: list[str]
) -> HookGroup | None:
    where = f"{source}: hooks.{event}"
    if not isinstance(raw, dict):
        problems.append(f"{where}: each entry must be an object with 'hooks'")
        return None
    matcher = raw.get("matcher", "")
    if not isinstance(matcher, str):
        problems.append(f"{where}: 'matcher' must be text")
        return None
    try:
        if matcher not in ("", "*"):  # both match everything; "*" is no regular expression
            re.compile(matcher)
    except re.error as exc:
        problems.append(f"{where}: matcher {matcher!r} is not a valid pattern ({exc})")
        return None
    commands = []
    for hook in raw.get("hooks") or []:
        if not isinstance(hook, dict) or hook.get("type", "command") != "command":
            kind = hook.get("type") if isinstance(hook, dict) else type(hook).__name__
            problems.append(f"{where}: hook type {kind!r} is not supported (only 'command')")
            continue
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            problems.append(f"{where}: a hook has no 'command'")
            continue
        timeout = _timeout(hook.get("timeout"))
        if event == RELAY_MESSAGE:
            timeout = min(timeout, MAX_RELAY_HOOK_SECONDS)
        content = {"event": event, "matcher": matcher, **hook}
        key = f"{event} {matcher or '*'} {command}"
        commands.append(
            HookCommand(
                command,
                timeout,
                source,
                project,
                key,
                digest_of(content),
                event,
                matcher or "*",
            )
        )
    return HookGroup(matcher, tuple(commands)) if commands else None


def parse_hooks(data: Any, source: Path, *, project: bool, into: HookSet) -> None:
    """Add the ``hooks`` block of one settings file's data to ``into``."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        into.problems.append(f"{source}: 'hooks' must be an object of events")
        return
    for event, entries in hooks.items():
        if event not in EVENTS:
            into.problems.append(
                f"{source}: hooks.{event} is not an event zcoder has ({', '.join(EVENTS)})"
            )
            continue
        if not isinstance(entries, list):
            into.problems.append(f"{source}: hooks.{event} must be a list")
            continue
        for raw in entries:
            group = _group(event, raw, source, project, into.problems)
            if group is not None:
                into.groups.setdefault(event, []).append(group)


def _read(path: Path, problems: list[str]) -> Any:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems.append(f"{path}: cannot be read ({exc.strerror or exc})")
        return None
    if len(data) > MAX_SETTINGS_BYTES:
        problems.append(f"{path}: larger than {MAX_SETTINGS_BYTES // 1024} KiB; not read")
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        problems.append(f"{path}: not valid JSON ({exc})")
        return None


def load_hooks(home: Path | None, workspace: Path) -> HookSet:
    """The user's hooks, then the project's (both run; the user's first)."""
    found = HookSet()
    if home is not None:
        user = home / "settings.json"
        parse_hooks(_read(user, found.problems), user, project=False, into=found)
    project = workspace / PROJECT_SETTINGS
    parse_hooks(_read(project, found.problems), project, project=True, into=found)
    return found
