"""Custom commands: Markdown files whose text becomes the user's prompt, in Claude Code's format.

A file ``review.md`` in a commands folder is the command ``/review``; its optional YAML front
matter gives ``description`` and ``argument-hint`` (read with the safe loader, as skills
are: a file from a cloned repository is data); its body is the prompt, with ``$ARGUMENTS``
and ``$1``… filled in when it runs (zcoder.commands.expand). A subfolder is a namespace, as
in Claude Code: ``frontend/component.md`` is still ``/component``, shown as
``(project:frontend)``; it never changes the name.

Where they are found, nearest first (nearer wins): ``.zcoder/commands/`` and, read-only,
``.claude/commands/`` in the workspace and each folder above it up to the repository's root
(as Claude Code finds its project commands, and as zcoder finds skills), then
``$ZCODER_HOME/commands/`` and ``~/.claude/commands/``. zcoder never writes to any of them.

A commands folder may come with a repository someone else wrote, so reading is defensive:
the scan is bounded (files, depth, bytes), a file is read only when it is a regular UTF-8
text file inside its folder (a symlink that leads out of the folder is refused: a file
``x.md → ~/.ssh/id_rsa`` would put a key into a prompt), a name must be letters, digits,
``-`` and ``_``, and whatever does not load is listed with why instead of vanishing.
Nothing in a command runs: Claude Code's ``!`command` `` lines are sent as text.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zcoder.base.errors import ZcoderError
from zcoder.base.sanitize import visible
from zcoder.skills.discovery import Place, project_chain, unique_places
from zcoder.skills.parse import SkillError, load_front_matter, split_front_matter, text_field
from zcoder.tools.confinement import (
    ConfinementError,
    canonical_workspace,
    open_read,
    read_limited,
    resolve_path,
)
from zcoder.tools.files import decode_text

MAX_COMMAND_FILE_BYTES: Final = 128 * 1024
MAX_FILES_PER_PLACE: Final = 500
MAX_DEPTH: Final = 4  # subfolders below a commands folder
MAX_COMMANDS: Final = 1000
MAX_NAME_CHARS: Final = 64
MAX_DESCRIPTION_CHARS: Final = 300
MAX_HINT_CHARS: Final = 120
SUFFIX: Final = ".md"
# A command's name (the file's stem, lowercased): the registry finds names lowercased.
NAME_RE: Final = re.compile(r"[a-z0-9][a-z0-9_-]*")


# Claude Code's own examples write ``argument-hint: [pr-number] [priority]``, which YAML
# reads as a list or refuses; the value of that one line is taken as the text it shows.
_HINT_LINE: Final = re.compile(r"^(argument-hint:[ \t]*)(\[.*?)[ \t]*$", re.MULTILINE)


def _quoted_hint(line: re.Match[str]) -> str:
    return line.group(1) + json.dumps(line.group(2))


class CommandFileError(ZcoderError, ValueError):
    """Why a command file cannot be loaded; the text names what to fix."""


@dataclass(frozen=True)
class CustomCommand:
    """A command that loaded: its name (without the slash), what /help says, its prompt."""

    name: str
    description: str
    argument_hint: str
    body: str
    path: Path
    source: str  # "project", "user", "claude (project)", "claude (user)"
    namespace: str = ""  # the subfolder it is in ("frontend"), shown, never in the name
    read_only: bool = False

    def label(self) -> str:
        """Where it came from, as Claude Code shows it: ``project``, ``project:frontend``."""
        return f"{self.source}:{self.namespace}" if self.namespace else self.source


@dataclass(frozen=True)
class CommandProblem:
    path: Path
    reason: str


@dataclass
class CommandSet:
    """The custom commands of a workspace, by name, with what did not load."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: list[CommandProblem] = field(default_factory=list)

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name)

    def names(self) -> list[str]:
        return sorted(self.commands)


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return " ".join(line.strip().lstrip("#").split())
    return ""


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_command(
    text: str,
    *,
    name: str,
    path: Path,
    source: str,
    namespace: str = "",
    read_only: bool = False,
) -> CustomCommand:
    """A command from its file's text: front matter is optional; without a description the
    body's first line stands for it (as in Claude Code). Raises CommandFileError."""
    body = text.lstrip("\ufeff")
    description = hint = ""
    if body.splitlines()[:1] and body.splitlines()[0].strip() == "---":
        try:
            raw, body = split_front_matter(body)
            front = load_front_matter(_HINT_LINE.sub(_quoted_hint, raw))
            description = text_field(front, "description")
            hint = text_field(front, "argument-hint")
        except SkillError as exc:
            raise CommandFileError(str(exc)) from None
    body = body.strip("\n")
    if not body.strip():
        raise CommandFileError("it has no prompt: its body is empty")
    # Shown by /help, Tab's hint and the palette: controls and invisible characters are
    # shown as escapes, never sent to the terminal.
    return CustomCommand(
        name=name,
        description=_bounded(visible(description or _first_line(body)), MAX_DESCRIPTION_CHARS),
        argument_hint=_bounded(visible(hint), MAX_HINT_CHARS),
        body=body,
        path=path,
        source=source,
        namespace=namespace,
        read_only=read_only,
    )


def command_name(file_name: str) -> str:
    """The command a file names (``Review.md`` → ``review``); CommandFileError if none."""
    stem = file_name[: -len(SUFFIX)].lower()
    if len(stem) > MAX_NAME_CHARS or not NAME_RE.fullmatch(stem):
        shown = stem[:80].encode("unicode_escape").decode("ascii")
        raise CommandFileError(
            f"its name {shown!r} is not letters, digits, '-' and '_' "
            f"(at most {MAX_NAME_CHARS} characters, starting with a letter or digit)"
        )
    return stem


def command_places(workspace: Path, zcoder_home: Path, home: Path) -> list[Place]:
    """Every folder commands are looked for in, the winning one first."""
    places: list[Place] = []
    for directory in project_chain(workspace):
        places.append(Place(directory / ".zcoder" / "commands", "project"))
        places.append(Place(directory / ".claude" / "commands", "claude (project)", True))
    places.append(Place(zcoder_home / "commands", "user"))
    places.append(Place(home / ".claude" / "commands", "claude (user)", True))
    return unique_places(places)


def _command_files(root: Path, problems: list[CommandProblem]) -> list[str]:
    """The ``.md`` files under ``root`` (relative, sorted, bounded); hidden names and
    folders reached through symlinks are left out."""
    found: list[str] = []
    pending: list[tuple[str, int]] = [("", 0)]
    while pending:
        relative, depth = pending.pop(0)
        try:
            with os.scandir(root / relative) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            inner = f"{relative}/{entry.name}" if relative else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if depth < MAX_DEPTH:
                    pending.append((inner, depth + 1))
            elif entry.name.endswith(SUFFIX):
                if len(found) >= MAX_FILES_PER_PLACE:
                    reason = f"more than {MAX_FILES_PER_PLACE} command files: the rest are left"
                    problems.append(CommandProblem(root, reason))
                    return found
                found.append(inner)
    return found


def load_command(
    root: Path, relative: str, source: str, *, shown: Path | None = None, read_only: bool = False
) -> CustomCommand:
    """Read and parse ``root/relative``, confined to ``root`` (its canonical form);
    ``shown``: the path as the user would write it. Raises CommandFileError."""
    *folders, file_name = relative.split("/")
    name = command_name(file_name)
    try:
        target = resolve_path(root, relative)
        with open_read(target) as handle:
            data = read_limited(handle, MAX_COMMAND_FILE_BYTES + 1)
        if len(data) > MAX_COMMAND_FILE_BYTES:
            raise CommandFileError(f"it is larger than {MAX_COMMAND_FILE_BYTES // 1024} KiB")
        text = decode_text(data, "it")
    except ConfinementError as exc:
        if "outside the workspace" in str(exc):
            raise CommandFileError("it is a symbolic link that leads out of its folder") from None
        raise CommandFileError(str(exc)) from None
    except OSError as exc:
        raise CommandFileError(f"it cannot be read: {exc.strerror or exc}") from None
    return parse_command(
        text,
        name=name,
        path=shown or root / relative,
        source=source,
        namespace="/".join(folders),
        read_only=read_only,
    )


def discover_commands(workspace: Path, zcoder_home: Path, home: Path | None = None) -> CommandSet:
    """Every custom command of ``workspace`` (``home``: where ``~/.claude`` is)."""
    found = CommandSet()
    for place in command_places(workspace, zcoder_home, home or Path.home()):
        try:
            root = canonical_workspace(place.path)
        except (ConfinementError, OSError):
            continue  # no such folder: the usual case
        for relative in _command_files(root, found.problems):
            shown = place.path / relative
            if len(found.commands) >= MAX_COMMANDS:
                reason = f"more than {MAX_COMMANDS} commands: the rest were not read"
                found.problems.append(CommandProblem(place.path, reason))
                return found
            try:
                command = load_command(
                    root, relative, place.source, shown=shown, read_only=place.read_only
                )
            except CommandFileError as exc:
                found.problems.append(CommandProblem(shown, str(exc)))
                continue
            winner = found.commands.get(command.name)
            if winner is not None:
                reason = f"shadowed by /{command.name} in {winner.path}"
                found.problems.append(CommandProblem(shown, reason))
                continue
            found.commands[command.name] = command
    return found
