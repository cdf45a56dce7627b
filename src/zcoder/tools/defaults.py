"""The built-in tools, in the order they are offered to the model."""

from __future__ import annotations

from zcoder.tools.base import ToolSpec
from zcoder.tools.command import RUN_COMMAND
from zcoder.tools.files import LIST_FILES, READ_FILE, READ_FILE_RANGE, REPLACE_TEXT, WRITE_FILE
from zcoder.tools.finish import FINISH
from zcoder.tools.job_tools import JOB_OUTPUT, STOP_JOB
from zcoder.tools.patch import APPLY_PATCH
from zcoder.tools.plan_tool import UPDATE_PLAN
from zcoder.tools.registry import ToolRegistry
from zcoder.tools.search import SEARCH

__all__ = ["BUILTIN_TOOLS", "default_registry"]

BUILTIN_TOOLS: tuple[ToolSpec, ...] = (
    LIST_FILES,
    READ_FILE,
    READ_FILE_RANGE,
    WRITE_FILE,
    REPLACE_TEXT,
    APPLY_PATCH,
    SEARCH,
    RUN_COMMAND,
    FINISH,
    JOB_OUTPUT,
    STOP_JOB,
    UPDATE_PLAN,
)


def default_registry() -> ToolRegistry:
    """A new registry holding the built-in tools (callers may register more)."""
    registry = ToolRegistry()
    for spec in BUILTIN_TOOLS:
        registry.register(spec)
    return registry
