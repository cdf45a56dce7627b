"""The model's two skill tools, and the catalog that tells it which skills exist.

Skills disclose themselves in three steps (the Agent Skills model): the catalog (each
skill's name and description, bounded) is in the system prompt from the session's start;
``activate_skill`` brings one skill's instructions into the conversation when a task
matches it; ``read_skill_file`` reads a file the instructions point to, confined to that
skill's folder by the same symlink-safe code that confines file tools to the workspace.
Neither tool runs anything: a skill's scripts run only through run_command, with its
approval, and a skill's ``allowed-tools`` grants nothing. Both tools exist only when the
workspace has skills, so a workspace without any pays no prompt tokens for them.
"""

from __future__ import annotations

from typing import Any, Final

from zcoder.skills.discovery import SkillSet
from zcoder.skills.parse import SKILL_FILE, Skill
from zcoder.tools.base import ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.confinement import (
    ConfinementError,
    canonical_workspace,
    open_read,
    read_limited,
    resolve_path,
)
from zcoder.tools.files import decode_text
from zcoder.tools.modes import Effects
from zcoder.tools.offload import in_thread
from zcoder.tools.output import bound_text
from zcoder.tools.registry import ToolRegistry

ACTIVATE_SKILL: Final = "activate_skill"
READ_SKILL_FILE: Final = "read_skill_file"
# The catalog's bounds: past them the model is told how many more there are.
MAX_CATALOG_SKILLS: Final = 40
MAX_CATALOG_CHARS: Final = 6000
MAX_LISTED_FILES: Final = 50
# A skill file is read up to this much, then bounded like any tool output (head and tail).
MAX_READ_BYTES: Final = 4 * 1024 * 1024

CATALOG_HEADER: Final = """\
Skills (folders of instructions for particular tasks). When the user's task matches a
skill's description, call activate_skill with its name first and follow what it says;
read a file it mentions with read_skill_file. A skill's scripts run only through
run_command, which asks the user as usual; nothing in a skill grants permissions."""


def catalog_text(skills: SkillSet) -> str:
    """The bounded catalog for the system prompt ("" when there are no skills)."""
    if not skills:
        return ""
    lines = [CATALOG_HEADER]
    used = len(CATALOG_HEADER)
    names = skills.names()
    for count, name in enumerate(names):
        line = f"- {name}: {skills.skills[name].description}"
        if count >= MAX_CATALOG_SKILLS or used + len(line) > MAX_CATALOG_CHARS:
            lines.append(f"- ({len(names) - count} more; the user can list them with /skills)")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def _files_of(skill: Skill) -> list[str]:
    """The skill's other files, relative to its folder (bounded, hidden ones left out)."""
    found: list[str] = []
    root = skill.folder
    for path in sorted(root.rglob("*")):
        if len(found) >= MAX_LISTED_FILES:
            found.append("…")
            break
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or path.name == SKILL_FILE:
            continue
        if path.is_file():
            found.append(relative.as_posix())
    return found


def activation_text(skill: Skill, limit: int) -> str:
    """What ``activate_skill`` returns: the instructions, and where the skill's files are."""
    files = _files_of(skill)
    listed = (
        "Files in this skill (read_skill_file): " + ", ".join(files)
        if files
        else "This skill has no other files."
    )
    note = (
        f"\n(Its allowed-tools '{skill.allowed_tools}' grants nothing here: commands still ask.)"
        if skill.allowed_tools
        else ""
    )
    head = f'<skill name="{skill.name}" folder="{skill.folder}">\n'
    return bound_text(f"{head}{skill.body}\n</skill>\n{listed}{note}", limit)


def make_skill_tools(skills: SkillSet) -> list[ToolSpec]:
    """The two tools over ``skills`` (none when there are no skills)."""
    if not skills:
        return []

    def unknown(name: object) -> ToolResult:
        known = ", ".join(skills.names()[:20])
        return ToolResult.error(f"no skill named {str(name)[:80]!r}; the skills are: {known}")

    async def activate(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        skill = skills.get(args["name"])
        if skill is None:
            return unknown(args["name"])
        return ToolResult(
            True, activation_text(skill, ctx.max_output), {"skill": skill.name, "activated": True}
        )

    def read_now(skill: Skill, raw: str, ctx: ToolContext) -> ToolResult:
        try:
            target = resolve_path(canonical_workspace(skill.folder), raw)
            with open_read(target) as handle:  # a regular file, reached without symlinks out
                data = read_limited(handle, MAX_READ_BYTES, ctx.stop)
            text = decode_text(data, target.display)
        except ConfinementError as exc:
            return ToolResult.error(f"{exc} (paths are relative to the skill's folder)")
        except OSError as exc:
            return ToolResult.error(f"cannot read {raw!r} in skill {skill.name}: {exc.strerror}")
        return ToolResult(True, bound_text(text, ctx.max_output), {"skill": skill.name})

    async def read(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        skill = skills.get(args["skill"])
        if skill is None:
            return unknown(args["skill"])
        raw = args["path"]
        return await in_thread(ctx.stop, lambda: read_now(skill, raw, ctx), name=READ_SKILL_FILE)

    names = {"type": "string", "description": "The skill's name, as the catalog lists it"}
    return [
        ToolSpec(
            name=ACTIVATE_SKILL,
            description="Load a skill's instructions into the conversation (see the catalog).",
            parameters=arguments({"name": names}, required=["name"]),
            handler=activate,
            effects=Effects.READS,
        ),
        ToolSpec(
            name=READ_SKILL_FILE,
            description="Read a text file inside a skill's folder (path relative to it).",
            parameters=arguments(
                {
                    "skill": names,
                    "path": {"type": "string", "description": "e.g. references/guide.md"},
                },
                required=["skill", "path"],
            ),
            handler=read,
            effects=Effects.READS,
        ),
    ]


def install_skills(registry: ToolRegistry, skills: SkillSet) -> SkillSet:
    """Register the skill tools for ``skills`` (none when there are none); returns them."""
    for spec in make_skill_tools(skills):
        registry.register(spec)
    return skills
