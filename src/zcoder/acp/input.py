"""``_zcoder/input``: the editor reaches a running turn (docs/editors.md, "Steering").

Each ACP session keeps the user's waiting input (zcoder.frontend.pending.PendingInput,
saved with the session at every change) and is its agent's steering source, as the TUI's
is. The method's actions:

* ``steer`` (text): into the running turn, at its next safe point (after the tool call in
  progress has its result, before the next model request); left when the turn ends
  without one, it is a turn of its own right after (Agent.run_steered_turn).
* ``queue`` (text): a follow-up, run as a prompt after the running turn.
* ``list``: what waits. ``drop`` (number, 1-based as ``list`` numbers them): take one away.
* ``resume``: what a stopped turn left (``session/cancel`` holds it; so does a crash: a
  loaded session's input comes back held) may run again: now, when nothing runs.

``steer`` and ``queue`` reach a running turn only: with nothing running they are refused
(``reason`` "idle" in the error's data) and the text is kept nowhere: it is a prompt
(``session/prompt``). What waits runs inside the request it waited for: a session/prompt
answers after the last of them, each follow-up shown first as the user's message; after a
relayed task, as that task's updates come, without a request.

Every answer lists what waits after the action; bad parameters are JSON-RPC errors that
say what was wrong, and change nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from acp import RequestError

from zcoder.acp.notices import SessionNotice
from zcoder.base.errors import UsageError
from zcoder.base.plural import counted
from zcoder.frontend.pending import PendingInput, PendingItem

__all__ = [
    "ACTIONS",
    "IDLE",
    "INPUT",
    "MAX_INPUT_CHARS",
    "MAX_WAITING",
    "InputAction",
    "SessionInput",
    "capability",
    "parse_input",
    "waiting",
]

INPUT: Final = "zcoder/input"
"""The method's name as the SDK hands it over (without the leading underscore)."""
ACTIONS: Final = ("steer", "queue", "list", "drop", "resume")
MAX_INPUT_CHARS: Final = 100_000
"""The longest text ``steer`` and ``queue`` take (a pasted log fits; a runaway does not)."""
MAX_WAITING: Final = 100
"""How many pieces of input may wait at once in a session."""
IDLE: Final = "idle"
"""The ``reason`` in the data of the error that refuses steer or queue with nothing running."""


@dataclass(frozen=True)
class InputAction:
    """One ``_zcoder/input`` request, checked (``parse_input``)."""

    session_id: str
    action: str
    text: str = ""
    number: int = 0


def _bad(details: str) -> RequestError:
    return RequestError.invalid_params({"details": details})


def parse_input(params: Mapping[str, Any] | None) -> InputAction:
    """The request, or an invalid-params error that says what is wrong with it."""
    params = params or {}
    session_id = params.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise _bad("_zcoder/input needs sessionId (the session's id, a string)")
    action = params.get("action")
    if action not in ACTIONS:
        raise _bad(f"unknown action {action!r}: _zcoder/input takes one of {', '.join(ACTIONS)}")
    if action in ("steer", "queue"):
        text = params.get("text")
        if not isinstance(text, str):
            raise _bad(f"{action} needs text (a string): what to send")
        if not text.strip():
            raise _bad(f"{action} was given empty text: nothing to send")
        if len(text) > MAX_INPUT_CHARS:
            raise _bad(
                f"the text is {len(text):,} characters; {action} takes at most "
                f"{MAX_INPUT_CHARS:,} (send a longer one as a prompt)"
            )
        return InputAction(session_id, action, text=text)
    if action == "drop":
        number = params.get("number")
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise _bad(
                f"drop needs number, a whole number from 1 (as list numbers them), not {number!r}"
            )
        return InputAction(session_id, action, number=number)
    return InputAction(session_id, action)


def item_entry(number: int, item: PendingItem) -> dict[str, Any]:
    return {"number": number, "kind": item.kind.value, "text": item.text, "held": item.held}


def waiting(items: Sequence[PendingItem]) -> list[dict[str, Any]]:
    """What waits, as the answers list it: numbered from 1, in order."""
    return [item_entry(number, item) for number, item in enumerate(items, 1)]


def capability() -> dict[str, Any]:
    """What ``initialize`` says of the method (``agentCapabilities._meta.zcoder.input``)."""
    return {"actions": list(ACTIONS), "maxChars": MAX_INPUT_CHARS, "maxWaiting": MAX_WAITING}


@dataclass(eq=False)
class SessionInput:
    """One session's waiting input and the method's actions on it; ``turn_running`` and
    ``run_waiting`` are the session's (zcoder.acp.session.AcpSession)."""

    session_id: str
    pending: PendingInput
    turn_running: Callable[[], bool]
    run_waiting: Callable[[], None]

    def act(self, request: InputAction) -> dict[str, Any]:
        pending = self.pending
        answer: dict[str, Any] = {}
        if request.action in ("steer", "queue"):
            self._check_room(request.action)
            if request.action == "steer":
                added = pending.steer(request.text)
            else:
                added = pending.follow_up(request.text)
            answer["added"] = item_entry(len(pending), added)
        elif request.action == "drop":
            try:
                answer["dropped"] = item_entry(request.number, pending.drop(request.number))
            except UsageError as exc:
                raise _bad(str(exc)) from None
        elif request.action == "resume":
            answer["resumed"] = resumed = pending.resume()
            if resumed and not self.turn_running():
                self.run_waiting()  # nothing runs that would take it: it runs now
        return {"waiting": waiting(pending.items()), **answer}

    def _check_room(self, action: str) -> None:
        if not self.turn_running():
            what = "steering" if action == "steer" else "a follow-up"
            raise RequestError.invalid_request(
                {
                    "details": f"no turn is running in session {self.session_id} to take "
                    f"{what}: send the text as a prompt (session/prompt)",
                    "reason": IDLE,
                }
            )
        if len(self.pending) >= MAX_WAITING:
            raise RequestError.invalid_request(
                {
                    "details": f"{MAX_WAITING} pieces of input wait already: drop one, "
                    "or wait for the turn to take them",
                }
            )

    def held_notice(self) -> list[SessionNotice]:
        """What to say when a loaded session's input came back held (none: nothing)."""
        if not (count := len(self.pending)):
            return []
        return [
            SessionNotice(
                "info",
                f"{counted(count, 'piece')} of your input waited when this session was last "
                "open; it is held: nothing of it runs until it is resumed (/queue resume; "
                "from an editor, _zcoder/input's resume).",
            )
        ]
