"""What a hook's exit status and output mean, as Claude Code defines it.

* Exit 0: success. Standard output may be JSON that decides: ``"decision": "block"`` with a
  ``reason``; ``"continue": false`` with a ``stopReason`` (stop the turn);
  ``hookSpecificOutput`` with ``permissionDecision`` (allow, deny, ask) and its reason for
  PreToolUse and RelayMessage, and ``additionalContext`` (text the model is given);
  ``systemMessage`` (shown to the user). Plain text on standard output is context for
  UserPromptSubmit and SessionStart, and ignored elsewhere.
* Exit 2: block. Standard error is the reason, and goes to the model.
* Any other status, a timeout or a hook that cannot start: an error the user is shown; the
  action goes on (a broken hook must not stop all work). This is Claude Code's rule too;
  docs/extensions.md warns that a guard hook must exit 2, not 1.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from zcoder.hooks.config import PRE_TOOL_USE, RELAY_MESSAGE, SESSION_START, USER_PROMPT_SUBMIT
from zcoder.hooks.runner import HookRun

ALLOW: Final = "allow"
DENY: Final = "deny"
ASK: Final = "ask"
# Events whose plain standard output is context for the model.
_PLAIN_TEXT_IS_CONTEXT: Final = (USER_PROMPT_SUBMIT, SESSION_START)
MAX_REASON_CHARS: Final = 4000
# Events whose hooks may decide a permission: a tool call, and a relayed message (allow
# runs it, deny refuses it, ask holds it for the user: zcoder.hooks.relay_gate).
_DECIDES: Final = (PRE_TOOL_USE, RELAY_MESSAGE)


@dataclass(frozen=True)
class HookOutcome:
    """One hook's answer."""

    block: bool = False
    reason: str = ""  # why it blocked (for the model), or why it decided a permission
    permission: str = ""  # PreToolUse: allow, deny, ask, or "" (no say)
    context: str = ""  # text the model is given
    stop: bool = False  # "continue": false — end the turn
    stop_reason: str = ""
    message: str = ""  # shown to the user
    error: str = ""  # the hook failed; shown to the user, the action goes on


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def _json_outcome(event: str, data: dict[str, Any]) -> HookOutcome:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    permission = specific.get("permissionDecision", "") if event in _DECIDES else ""
    if permission not in (ALLOW, DENY, ASK):
        permission = ""
    # The older form: {"decision": "approve" | "block", "reason": ...}
    decision = data.get("decision")
    if event in _DECIDES and decision == "approve" and not permission:
        permission = ALLOW
    block = decision == "block" or permission == DENY
    reason = specific.get("permissionDecisionReason") or data.get("reason") or ""
    context = specific.get("additionalContext") or ""
    stop = data.get("continue") is False
    return HookOutcome(
        block=block,
        reason=_cut(str(reason)),
        permission=permission,
        context=_cut(str(context)),
        stop=stop,
        stop_reason=_cut(str(data.get("stopReason") or "")),
        message=_cut(str(data.get("systemMessage") or "")),
    )


def interpret(event: str, run: HookRun, what: str) -> HookOutcome:
    """``run`` of the hook ``what`` (its command, for messages) for ``event``."""
    if run.error:
        return HookOutcome(error=f"hook {what}: {run.error}")
    if run.timed_out:
        return HookOutcome(error=f"hook {what} did not finish in time and was stopped")
    if run.exit_code == 2:
        reason = _cut(run.stderr) or "a hook blocked this (exit status 2, no reason given)"
        return HookOutcome(block=True, reason=reason)
    if run.exit_code != 0:
        detail = _cut(run.stderr).splitlines()[:1]
        return HookOutcome(
            error=f"hook {what} failed (exit status {run.exit_code})"
            + (f": {detail[0]}" if detail else "")
        )
    text = run.stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return _json_outcome(event, data)
        if event == RELAY_MESSAGE:  # a decision it meant and we cannot read: not an allow
            return HookOutcome(error=f"hook {what} answered JSON that cannot be read")
    if event in _PLAIN_TEXT_IS_CONTEXT and text:
        return HookOutcome(context=_cut(text))
    return HookOutcome()
