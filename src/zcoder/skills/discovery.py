"""Where skills are found, and which one wins when two share a name.

The places are those users already have (Agent Skills, Claude Code): ``.agents/skills/`` in
the workspace and in every folder above it up to the repository's root, then
``~/.agents/skills/``; and, read-only, ``.claude/skills/`` at the same places, so a user's
Claude Code skills work unchanged. Nearer wins: a project skill shadows a user skill of the
same name, a workspace skill shadows one from the repository's root, and ``.agents`` shadows
``.claude`` at the same level. Every skill that did not load, or was shadowed, is listed
with why (``/skills``) instead of vanishing.

A project's skill comes with the repository, so it must stay in it: a skill folder (or its
SKILL.md) that is a symbolic link resolving outside the repository's root is refused with
a notice, never read (a clone could otherwise point the skill tools at any folder of the
user's, and read_skill_file confines reads to the folder's real path). Links that stay in
the repository (``.claude/skills -> ../.agents/skills``) are followed. The user's own
places follow their links anywhere: the user made them.

A scan is bounded (folders per place, skills in all), so a home with thousands of folders
cannot slow zcoder's start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zcoder.skills.parse import SKILL_FILE, Skill, SkillError, SkillProblem, load_skill

MAX_FOLDERS_PER_PLACE: Final = 200
MAX_SKILLS: Final = 500


@dataclass(frozen=True)
class Place:
    """One folder that holds skill folders."""

    path: Path
    source: str
    read_only: bool = False
    confine: Path | None = None
    """The real path its skills must resolve inside (a project's: the repository's root)."""


@dataclass
class SkillSet:
    """The skills of a workspace, by name, with what did not load."""

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[SkillProblem] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.skills)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def names(self) -> list[str]:
        return sorted(self.skills)


def project_chain(workspace: Path) -> list[Path]:
    """The workspace and the folders above it up to the repository's root, nearest first
    (only the workspace when it is in no git repository)."""
    chain = [workspace, *workspace.parents]
    for index, candidate in enumerate(chain):
        if (candidate / ".git").exists():
            return chain[: index + 1]
    return [workspace]


def skill_places(workspace: Path, home: Path) -> list[Place]:
    """Every place skills are looked for, the winning one first."""
    places: list[Place] = []
    chain = project_chain(workspace)
    root = chain[-1].resolve()
    for directory in chain:
        places.append(Place(directory / ".agents" / "skills", "project", confine=root))
        places.append(Place(directory / ".claude" / "skills", "claude (project)", True, root))
    places.append(Place(home / ".agents" / "skills", "user"))
    places.append(Place(home / ".claude" / "skills", "claude (user)", True))
    return unique_places(places)


def unique_places(places: list[Place]) -> list[Place]:
    """``places`` without repeats, the first kept (the home may be inside the repository,
    or be the workspace)."""
    seen: set[Path] = set()
    unique = []
    for place in places:
        if place.path not in seen:
            seen.add(place.path)
            unique.append(place)
    return unique


def _skill_folders(place: Place) -> list[Path]:
    try:
        with os.scandir(place.path) as entries:
            names = sorted(
                entry.name
                for entry in entries
                if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=True)
            )
    except OSError:
        return []
    return [place.path / name for name in names[:MAX_FOLDERS_PER_PLACE]]


def outside(place: Place, folder: Path) -> str | None:
    """Why the skill in ``folder`` leaves ``place``'s confinement, or None when it stays."""
    if place.confine is None:
        return None
    for path in (folder, folder / SKILL_FILE):
        real = path.resolve()
        if not real.is_relative_to(place.confine):
            return (
                f"it is a symbolic link to {real}, outside the repository ({place.confine}): "
                "a project's skill must stay in its repository, so it is not read"
            )
    return None


def discover_skills(workspace: Path, home: Path | None = None) -> SkillSet:
    """Every skill of ``workspace`` (``home``: the user's home, where ``~/.agents`` is)."""
    found = SkillSet()
    for place in skill_places(workspace, home if home is not None else Path.home()):
        for folder in _skill_folders(place):
            if len(found.skills) >= MAX_SKILLS:
                too_many = f"more than {MAX_SKILLS} skills: the rest were not read"
                found.problems.append(SkillProblem(place.path, too_many))
                return found
            if not (folder / SKILL_FILE).is_file():
                continue
            leaves = outside(place, folder)
            if leaves is not None:
                found.problems.append(SkillProblem(folder, leaves, said_at_start=True))
                continue
            try:
                skill = load_skill(folder, place.source, read_only=place.read_only)
            except SkillError as exc:
                found.problems.append(SkillProblem(folder / SKILL_FILE, str(exc)))
                continue
            except OSError as exc:
                found.problems.append(
                    SkillProblem(folder / SKILL_FILE, f"it cannot be read: {exc.strerror or exc}")
                )
                continue
            winner = found.skills.get(skill.name)
            if winner is not None:
                found.problems.append(
                    SkillProblem(
                        skill.file, f"shadowed by the skill of the same name in {winner.folder}"
                    )
                )
                continue
            found.skills[skill.name] = skill
    return found
