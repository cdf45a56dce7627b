"""The guard's two calls: its verdict on a command line, and why it refuses one (the
package's docstring says what it checks)."""

from __future__ import annotations

import os
import posixpath

from zcoder.tools.guard.model import GuardVerdict, Verdict, _Refused, _Scope
from zcoder.tools.guard.walk import _Walker

__all__ = ["check_command", "classify_command"]


def check_command(command: str, workspace: str | os.PathLike[str] | None = None) -> GuardVerdict:
    """The guard's verdict on ``command``: refuse, warn (with why) or allow. Never raises.

    ``workspace`` (the canonical workspace path) lets the guard also refuse recursive
    deletion of the workspace by its absolute path or of one of its ancestors.
    """
    ws = posixpath.normpath(os.fspath(workspace)) if workspace is not None else None
    guard = _Walker(ws)
    try:
        guard.line(command, _Scope(), depth=0)
    except _Refused as refused:
        return GuardVerdict(Verdict.REFUSE, refused.reason)
    except RecursionError:
        return GuardVerdict(Verdict.REFUSE, "the command is nested too deeply to be checked safely")
    except Exception as exc:  # noqa: BLE001 - a guard that breaks must fail closed
        return GuardVerdict(Verdict.REFUSE, f"the guard could not check this command ({exc})")
    if guard.warnings:
        return GuardVerdict(Verdict.WARN, "; ".join(guard.warnings))
    return GuardVerdict(Verdict.ALLOW)


def classify_command(command: str, workspace: str | os.PathLike[str] | None = None) -> str | None:
    """Why the guard refuses ``command``, or None when it does not (it may still warn)."""
    verdict = check_command(command, workspace)
    return verdict.reason if verdict.refused else None
