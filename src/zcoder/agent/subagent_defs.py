"""User-defined subagents, in Claude Code's format: one Markdown file per agent.

``.zcoder/agents/*.md`` and ``.claude/agents/*.md`` in the workspace and every folder above
it up to the repository's root, then ``$ZCODER_HOME/agents/`` and ``~/.claude/agents/``.
A file is YAML front matter between two ``---`` lines, read with the safe loader the skills
use (zcoder.skills.parse): ``name`` and ``description`` (required), ``tools`` (a comma
list, or a YAML list) and ``model``; its body is the subagent's system prompt. Nearer
wins, as for skills (zcoder.skills.discovery): a project's agent shadows the user's of the
same name, ``.zcoder`` shadows ``.claude`` at the same level. A file that does not load is
reported with why, never fatal; a project's file that is a symbolic link out of the
repository is not read.

A definition grants nothing by itself: ``tools`` can only narrow what the subagent gets,
and a tool that changes something is given only where the user's mode allows it
(zcoder.agent.subagent).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zcoder.skills.discovery import Place, project_chain, unique_places
from zcoder.skills.parse import (
    MAX_DESCRIPTION_CHARS,
    SkillError,
    load_front_matter,
    name_and_description,
    split_front_matter,
    text_field,
)

__all__ = ["AgentDefinition", "AgentSet", "agent_places", "discover_agents", "parse_agent"]

MAX_AGENT_FILE_BYTES: Final = 64 * 1024
MAX_FILES_PER_PLACE: Final = 100
MAX_AGENTS: Final = 200


@dataclass(frozen=True)
class AgentDefinition:
    """A subagent the user defined: what the task tool's ``subagent_type`` names."""

    name: str
    description: str
    prompt: str  # the file's body: the subagent's system prompt
    file: Path
    source: str  # "project", "claude (project)", "user", "claude (user)"
    tools: tuple[str, ...] | None = None  # None: the field was not given
    model: str = ""


@dataclass
class AgentSet:
    """The subagents of a workspace, by name, with what did not load."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    def names(self) -> list[str]:
        return sorted(self.agents)


def agent_places(workspace: Path, home: Path | None) -> list[Place]:
    """Every place agent files are looked for, the winning one first."""
    chain = project_chain(workspace)
    root = chain[-1].resolve()
    places: list[Place] = []
    for directory in chain:
        places.append(Place(directory / ".zcoder" / "agents", "project", confine=root))
        places.append(Place(directory / ".claude" / "agents", "claude (project)", True, root))
    if home is not None:
        places.append(Place(home / "agents", "user"))
    places.append(Place(Path.home() / ".claude" / "agents", "claude (user)", True))
    return unique_places(places)


def parse_agent(text: str, file: Path, source: str) -> AgentDefinition:
    """A definition from its file's text; SkillError naming what is wrong."""
    raw, body = split_front_matter(text)
    front = load_front_matter(raw)
    name, description = name_and_description(front)
    description = description[:MAX_DESCRIPTION_CHARS]
    tools: tuple[str, ...] | None = None
    if front.get("tools") is not None:
        listed = text_field(front, "tools", 2000).replace(",", " ").split()
        tools = tuple(dict.fromkeys(listed))
    if not body.strip():
        raise SkillError("it has no prompt after its front matter")
    model = text_field(front, "model", 200)
    return AgentDefinition(
        name=name,
        description=description,
        prompt=body.strip(),
        file=file,
        source=source,
        tools=tools,
        model="" if model == "inherit" else model,
    )


def _files(place: Place) -> list[Path]:
    try:
        with os.scandir(place.path) as entries:
            names = sorted(
                entry.name
                for entry in entries
                if entry.name.endswith(".md")
                and not entry.name.startswith(".")
                and entry.is_file(follow_symlinks=True)
            )
    except OSError:
        return []
    return [place.path / name for name in names[:MAX_FILES_PER_PLACE]]


def _read(file: Path, place: Place) -> AgentDefinition:
    if place.confine is not None and not file.resolve().is_relative_to(place.confine):
        raise SkillError(
            f"it is a symbolic link to {file.resolve()}, outside the repository "
            f"({place.confine}): a project's agent must stay in its repository"
        )
    with file.open("rb") as handle:
        data = handle.read(MAX_AGENT_FILE_BYTES + 1)
    if len(data) > MAX_AGENT_FILE_BYTES:
        raise SkillError(f"it is larger than {MAX_AGENT_FILE_BYTES // 1024} KiB")
    return parse_agent(data.decode("utf-8", errors="replace"), file, place.source)


def discover_agents(workspace: Path, home: Path | None) -> AgentSet:
    """Every subagent defined for ``workspace`` (``home``: zcoder's home, $ZCODER_HOME)."""
    found = AgentSet()
    for place in agent_places(workspace, home):
        for file in _files(place):
            if len(found.agents) >= MAX_AGENTS:
                found.problems.append(f"{place.path}: more than {MAX_AGENTS} agents; not read")
                return found
            try:
                agent = _read(file, place)
            except SkillError as exc:
                found.problems.append(f"{file}: {exc}")
                continue
            except OSError as exc:
                found.problems.append(f"{file}: it cannot be read: {exc.strerror or exc}")
                continue
            winner = found.agents.get(agent.name)
            if winner is not None:
                found.problems.append(f"{file}: shadowed by the agent in {winner.file}")
                continue
            found.agents[agent.name] = agent
    return found
