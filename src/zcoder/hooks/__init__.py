"""Hooks: the user's commands that run at fixed points of a session, in Claude Code's format.

``load_hooks`` reads them (zcoder.hooks.config), ``HookEngine`` runs an event's hooks and
joins their answers (zcoder.hooks.engine); docs/extensions.md says what each event may do.
"""

from pathlib import Path

from zcoder.hooks.config import EVENTS, HookCommand, HookSet, load_hooks, parse_hooks
from zcoder.hooks.consent import HookConsent
from zcoder.hooks.engine import EventOutcome, HookEngine
from zcoder.hooks.outcome import ALLOW, ASK, DENY, HookOutcome, interpret
from zcoder.hooks.runner import HookRun, run_hook


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


__all__ = [
    "ALLOW",
    "ASK",
    "DENY",
    "EVENTS",
    "EventOutcome",
    "HookCommand",
    "HookConsent",
    "HookEngine",
    "HookOutcome",
    "HookRun",
    "HookSet",
    "engine_for",
    "interpret",
    "load_hooks",
    "parse_hooks",
    "run_hook",
]
