"""Agent Skills: folders of instructions the model activates when a task matches them.

``discover_skills`` finds them (zcoder.skills.discovery), ``catalog_text`` is what the
system prompt lists, ``make_skill_tools`` the model's two tools (zcoder.skills.tools).
"""

from zcoder.skills.discovery import SkillSet, discover_skills, skill_places
from zcoder.skills.parse import Skill, SkillError, SkillProblem, parse_skill
from zcoder.skills.tools import (
    ACTIVATE_SKILL,
    READ_SKILL_FILE,
    activation_text,
    catalog_text,
    make_skill_tools,
)
from zcoder.tools.registry import ToolRegistry


def install_skills(registry: ToolRegistry, skills: SkillSet) -> SkillSet:
    """Register the skill tools for ``skills`` (none when there are none); returns them."""
    for spec in make_skill_tools(skills):
        registry.register(spec)
    return skills


__all__ = [
    "ACTIVATE_SKILL",
    "READ_SKILL_FILE",
    "Skill",
    "SkillError",
    "SkillProblem",
    "SkillSet",
    "activation_text",
    "catalog_text",
    "discover_skills",
    "install_skills",
    "make_skill_tools",
    "parse_skill",
    "skill_places",
]
