"""The hooks of a workspace made ready to run, with the user's consent to the project's."""

from __future__ import annotations

from pathlib import Path

from zcoder.hooks.config import load_hooks
from zcoder.hooks.consent import HookConsent
from zcoder.hooks.engine import HookEngine

__all__ = ["engine_for"]


def engine_for(home: Path | None, workspace: Path) -> tuple[HookEngine | None, list[str]]:
    """The hooks of ``workspace`` ready to run (None when there are none), and what could not
    be read, for the user to see. A project hook runs only with the user's consent, read
    from ``home`` at each event (an answer given meanwhile, in a shell, counts at once)."""
    found = load_hooks(home, workspace)
    if not found:
        return None, list(found.problems)
    consent = HookConsent(home, workspace)
    engine = HookEngine(
        found, workspace, allowed=consent.allows, unasked=lambda: consent.unasked(found)
    )
    return engine, list(found.problems)
