"""Agent Skills: folders of instructions the model activates when a task matches them.

``discover_skills`` finds them (zcoder.skills.discovery), ``catalog_text`` is what the
system prompt lists, ``make_skill_tools`` the model's two tools and ``install_skills``
their registration (zcoder.skills.tools).
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from zcoder.skills.discovery import SkillSet, discover_skills, skill_places
    from zcoder.skills.parse import Skill, SkillError, SkillProblem, parse_skill
    from zcoder.skills.tools import (
        ACTIVATE_SKILL,
        READ_SKILL_FILE,
        activation_text,
        catalog_text,
        install_skills,
        make_skill_tools,
    )

__getattr__, __dir__, __all__ = face(__name__, __file__)
