"""Hooks: the user's commands that run at fixed points of a session, in Claude Code's format.

``load_hooks`` reads them (zcoder.hooks.config), ``HookEngine`` runs an event's hooks and
joins their answers (zcoder.hooks.engine), ``engine_for`` makes a workspace's ready to run
(zcoder.hooks.setup); docs/extensions.md says what each event may do.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from zcoder.hooks.config import EVENTS, HookCommand, HookSet, load_hooks, parse_hooks
    from zcoder.hooks.consent import HookConsent
    from zcoder.hooks.engine import EventOutcome, HookEngine
    from zcoder.hooks.outcome import ALLOW, ASK, DENY, HookOutcome, interpret
    from zcoder.hooks.runner import HookRun, run_hook
    from zcoder.hooks.setup import engine_for

__getattr__, __dir__, __all__ = face(__name__, __file__)
