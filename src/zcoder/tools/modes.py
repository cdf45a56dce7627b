"""Permission modes, switched while zcoder runs, and what each tool may do in them.

* ``ask`` (the default): today's rules (zcoder.tools.approval): commands are asked unless
  ``--yes`` or an ``a`` said otherwise, edits follow ``ZCODER_EDITS``.
* ``accept-edits``: file edits are written without a question even with
  ``ZCODER_EDITS=ask``; commands are asked as in ``ask``. A relayed turn's edits still ask
  (``ZCODER_RELAY_EDITS``), and in the sysadmin profile, which never grants a standing
  ``a``, edits follow ``ZCODER_EDITS`` as in ``ask``.
* ``plan``: read-only. The tools that change something (``Effects.WRITES``: the edit
  tools, a relay send, an MCP tool without ``readOnlyHint``) are not offered and refused
  if called anyway; run_command (``Effects.CHECKED``) runs only a command the read-only
  classifier (zcoder.tools.guard.readonly) knows changes nothing, asked as in ``ask``;
  the model is told it is planning.

Only the user changes the mode (Shift+Tab, ``/mode``, ``--mode``, an editor's mode menu):
no tool does, and a relayed task never does.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

__all__ = ["PLAN_PROMPT", "Effects", "Mode", "parse_mode", "plan_environment"]


class Mode(enum.StrEnum):
    """The permission mode of this process."""

    ASK = "ask"
    ACCEPT_EDITS = "accept-edits"
    PLAN = "plan"

    @property
    def label(self) -> str:
        """As the header and the notices say it."""
        return self.value.replace("-", " ")

    @property
    def about(self) -> str:
        """What the mode lets happen, in a few words (/mode, an editor's mode list)."""
        return _ABOUT[self]

    def next(self) -> Mode:
        """Shift+Tab's order: ask → accept edits → plan → ask."""
        order = list(Mode)
        return order[(order.index(self) + 1) % len(order)]


_ABOUT: Final = {
    Mode.ASK: "commands ask first; edits follow ZCODER_EDITS",
    Mode.ACCEPT_EDITS: "file edits are written without asking; commands ask first",
    Mode.PLAN: "read-only: no edits, only read-only commands, no relay sends; ends with a plan",
}


def parse_mode(raw: str) -> Mode:
    """A mode as the user types it (``accept edits``, ``accept-edits``, ``Plan``);
    ValueError naming the modes otherwise."""
    word = "-".join(raw.strip().lower().replace("_", "-").split())
    try:
        return Mode(word)
    except ValueError:
        names = ", ".join(mode.value for mode in Mode)
        raise ValueError(f"unknown mode {raw.strip()!r}; the modes are {names}") from None


class Effects(enum.Enum):
    """What a tool's calls may change, for plan mode (ToolSpec.effects)."""

    READS = "reads"
    """Changes nothing: offered in every mode."""
    WRITES = "writes"
    """May change files, send a relay message or act through a server: not offered in
    plan mode, and refused there if called anyway. The default: a tool says it is safe."""
    CHECKED = "checked"
    """Each call is judged in plan mode (run_command: read-only commands only)."""


PLAN_PROMPT: Final = """\
Plan mode: you are planning, not changing anything. Read and search what you need (only
read-only commands run), then reply with a short numbered plan for the user to accept."""


def plan_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """What plan mode adds to a command's environment (``environ``: the one it runs with),
    so that git, which the read-only classifier lets run, stays read-only.

    * ``safe.bareRepository=explicit``: git uses no bare repository it finds by itself.
      A project can hold one as plain files (``fixtures/x/``: HEAD, config, objects), and
      its config can name a program ``git show`` or ``git log -p`` runs (a textconv
      driver); from a cwd inside it, git would. Given as command-line configuration
      (``GIT_CONFIG_COUNT``, after any the user set), which a repository cannot override.
    * ``GIT_OPTIONAL_LOCKS=0``: ``git status`` does not rewrite a stale index.
    """
    raw = environ.get("GIT_CONFIG_COUNT", "0")
    count = int(raw) if raw.isascii() and raw.isdigit() else 0
    return {
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_CONFIG_COUNT": str(count + 1),
        f"GIT_CONFIG_KEY_{count}": "safe.bareRepository",
        f"GIT_CONFIG_VALUE_{count}": "explicit",
    }
