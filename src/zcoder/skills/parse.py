"""One skill folder's ``SKILL.md``: YAML front matter, then Markdown instructions.

The format is the open Agent Skills one (agentskills.io), which Claude Code, Codex and others
read: front matter between two ``---`` lines with ``name`` and ``description`` (required),
``license``, ``compatibility``, ``metadata`` and ``allowed-tools`` (optional). It is parsed with
PyYAML's *safe* loader only: a SKILL.md from a cloned repository is data, and the full loader
would build arbitrary Python objects from tags in it.

Parsing is lenient where the spec's own guide for clients is (a name that differs from its
folder still loads, with a warning) and strict where zcoder's own safety needs it: a name
becomes a tool argument, a ``$NAME`` at the start of a prompt and a ``/skill NAME`` command,
so it must be the spec's lowercase-and-hyphens form; a file too large to be instructions is
not read at all. ``allowed-tools`` is kept, shown, and grants nothing: every command a skill
suggests still goes through run_command and its approval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from zcoder.base.errors import ZcoderError

SKILL_FILE: Final = "SKILL.md"
MAX_SKILL_FILE_BYTES: Final = 256 * 1024
MAX_NAME_CHARS: Final = 64
MAX_DESCRIPTION_CHARS: Final = 1024
MAX_COMPATIBILITY_CHARS: Final = 500
# The spec's name: lowercase letters, digits and single hyphens, not at either end.
NAME_RE: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Skill:
    """A skill that loaded: what the catalog shows and where its files are."""

    name: str
    description: str
    folder: Path  # the skill's folder (as found; files are confined to its real path)
    source: str  # where it was found, for /skills: "project", "user", "claude (project)"…
    body: str  # the Markdown instructions after the front matter
    read_only: bool = False  # found under .claude/: zcoder reads it and never writes there
    license: str = ""
    compatibility: str = ""
    allowed_tools: str = ""  # shown; grants nothing
    user_invocable: bool = True  # also the command /NAME (Claude Code's user-invocable)
    metadata: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass(frozen=True)
class SkillProblem:
    """A SKILL.md that did not load (or a skill another one shadows), and why."""

    path: Path
    reason: str
    said_at_start: bool = False
    """Also said when the session starts, not only by /skills (a skill refused for leaving
    its repository)."""


class SkillError(ZcoderError, ValueError):
    """Why a SKILL.md cannot be loaded; the text names what to fix."""


def split_front_matter(text: str) -> tuple[str, str]:
    """The YAML between the opening and closing ``---`` lines, and the body after them."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillError("it does not begin with a '---' line (YAML front matter)")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :]).strip("\n")
    raise SkillError("its front matter has no closing '---' line")


def load_front_matter(raw: str) -> dict[Any, Any]:
    """The fields of front matter, read with the safe loader (also for custom commands)."""
    try:
        front = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise SkillError(f"its front matter is not valid YAML{where}") from None
    if front is None:
        return {}
    if not isinstance(front, dict):
        raise SkillError("its front matter is not a YAML mapping of fields")
    return front


def text_field(front: dict[Any, Any], key: str, limit: int | None = None) -> str:
    """A field as one line of text ("" when absent); SkillError when it is not text."""
    return _text(front, key, limit)


def _text(front: dict[Any, Any], key: str, limit: int | None = None) -> str:
    value = front.get(key)
    if value is None:
        return ""
    if isinstance(value, list):  # allowed-tools may be a YAML list
        value = " ".join(str(item) for item in value)
    if not isinstance(value, str | int | float):
        raise SkillError(f"'{key}' must be text")
    text = " ".join(str(value).split())
    return text[:limit] if limit is not None else text


def name_and_description(front: dict[Any, Any]) -> tuple[str, str]:
    """The ``name`` (the spec's form: it becomes an argument and a command) and the
    ``description`` front matter must have (a skill's, a subagent's); SkillError if not."""
    name = _text(front, "name")
    if not name:
        raise SkillError("its front matter has no 'name'")
    if len(name) > MAX_NAME_CHARS or not NAME_RE.fullmatch(name):
        raise SkillError(
            f"its name {name[:80]!r} is not lowercase letters, digits and single hyphens "
            f"(at most {MAX_NAME_CHARS} characters)"
        )
    description = _text(front, "description")
    if not description:
        raise SkillError("its front matter has no 'description'")
    return name, description


def parse_skill(text: str, folder: Path, source: str, *, read_only: bool = False) -> Skill:
    """A skill from its SKILL.md text. Raises SkillError naming what is wrong."""
    raw, body = split_front_matter(text)
    front = load_front_matter(raw)
    name, description = name_and_description(front)
    warnings = []
    if name != folder.name:
        warnings.append(f"its name {name!r} differs from its folder {folder.name!r}")
    if len(description) > MAX_DESCRIPTION_CHARS:
        warnings.append(f"its description is cut to {MAX_DESCRIPTION_CHARS} characters")
        description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
    metadata = front.get("metadata")
    return Skill(
        name=name,
        description=description,
        folder=folder,
        source=source,
        body=body,
        read_only=read_only,
        license=_text(front, "license", 200),
        compatibility=_text(front, "compatibility", MAX_COMPATIBILITY_CHARS),
        allowed_tools=_text(front, "allowed-tools", 500),
        metadata=(
            {str(k): str(v) for k, v in metadata.items()} if isinstance(metadata, dict) else {}
        ),
        warnings=tuple(warnings),
        user_invocable=front.get("user-invocable") is not False,
    )


def load_skill(folder: Path, source: str, *, read_only: bool = False) -> Skill:
    """Read and parse ``folder/SKILL.md``. Raises SkillError (or OSError when unreadable)."""
    path = folder / SKILL_FILE
    with path.open("rb") as handle:
        data = handle.read(MAX_SKILL_FILE_BYTES + 1)
    if len(data) > MAX_SKILL_FILE_BYTES:
        raise SkillError(f"it is larger than {MAX_SKILL_FILE_BYTES // 1024} KiB")
    return parse_skill(data.decode("utf-8", errors="replace"), folder, source, read_only=read_only)
