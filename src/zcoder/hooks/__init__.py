"""Hooks: the user's commands that run at fixed points of a session, in Claude Code's format.

``load_hooks`` reads them (zcoder.hooks.config), ``HookEngine`` runs an event's hooks and
joins their answers (zcoder.hooks.engine); docs/extensions.md says what each event may do.
"""

from zcoder.hooks.config import EVENTS, HookCommand, HookSet, load_hooks, parse_hooks
from zcoder.hooks.engine import EventOutcome, HookEngine
from zcoder.hooks.outcome import ALLOW, ASK, DENY, HookOutcome, interpret
from zcoder.hooks.runner import HookRun, run_hook

__all__ = [
    "ALLOW",
    "ASK",
    "DENY",
    "EVENTS",
    "EventOutcome",
    "HookCommand",
    "HookEngine",
    "HookOutcome",
    "HookRun",
    "HookSet",
    "interpret",
    "load_hooks",
    "parse_hooks",
    "run_hook",
]
