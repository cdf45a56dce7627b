"""Which skills are active in a conversation, kept where the model sees them: its history.

A skill is active once its instructions joined the conversation: the model called
``activate_skill`` (a tool result that begins ``<skill name="…">``), or the user activated
it (``/skill NAME``, ``$NAME``, ``/NAME``: a context record made by ``user_activation``).
The model history is what the session store saves (its messages table), so the set of
active skills is saved with every message and comes back with a resumed session; it is
read from the history (``active_skills``), never kept beside it where the two could
disagree.

Compaction replaces older history with a summary, which would drop the instructions of a
skill activated before the cut. ``carried_records`` gives, for each such skill, a record
holding its instructions exactly as the model last saw them; compaction puts them after
the summary, so the skill stays active and its instructions stay in what the model sees.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from zcoder.model import Message, user_message
from zcoder.skills.parse import Skill
from zcoder.skills.tools import ACTIVATE_SKILL, activation_text

USER_ACTIVATION: Final = "[zcoder] The user activated the skill"
CARRIED: Final = "[zcoder] A skill activated before the summary above is still active:"
_BLOCK: Final = re.compile(r'<skill name="([a-z0-9]+(?:-[a-z0-9]+)*)"')


def user_activation(skill: Skill, limit: int) -> str:
    """The context record of a skill the user activated: its instructions, and that the
    user chose it."""
    head = f"{USER_ACTIVATION} {skill.name}: follow its instructions where they apply."
    return f"{head}\n{activation_text(skill, limit)}"


def _skill_block(message: Mapping[str, Any]) -> tuple[str, str] | None:
    """(name, the ``<skill …>`` block and what follows) of a message that activated a
    skill; None for any other message."""
    content = str(message.get("content") or "")
    role = message.get("role")
    if role == "tool" and message.get("tool_name") == ACTIVATE_SKILL:
        block = content
    elif role == "user" and content.startswith((USER_ACTIVATION, CARRIED)):
        block = content.partition("\n")[2]
    else:
        return None
    found = _BLOCK.match(block)
    return (found.group(1), block) if found is not None else None


def is_skill_record(message: Mapping[str, Any]) -> bool:
    """A record zcoder added that holds a skill's instructions (not a turn of the user)."""
    return message.get("role") == "user" and _skill_block(message) is not None


def active_skills(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of the skills active in ``messages``, in the order they were activated."""
    names: list[str] = []
    for message in messages:
        found = _skill_block(message)
        if found is not None and found[0] not in names:
            names.append(found[0])
    return names


def carried_records(older: Sequence[Message], kept: Sequence[Message]) -> list[Message]:
    """Records for the skills active in ``older`` but not in ``kept``: each with the
    instructions the model last saw of it, to follow the summary that replaces ``older``."""
    latest: dict[str, str] = {}
    for message in older:
        found = _skill_block(message)
        if found is not None:
            latest.pop(found[0], None)  # keep the order of the latest activation
            latest[found[0]] = found[1]
    still = set(active_skills(kept))
    return [
        user_message(f"{CARRIED} {name}.\n{block}")
        for name, block in latest.items()
        if name not in still
    ]
