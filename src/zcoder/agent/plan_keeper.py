"""The conversation's plan (tools/plan.py): kept by the agent, saved with the session.

``update_plan`` (tools/plan_tool.py) replaces it through the turn's context; each change
is saved at once (the session's state, key "plan") and told to the front end
(PlanChanged). A session opened again gets its plan back; after a compaction the model
reads it in a record right after the summary (``records``), so it is never summarised
away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from zcoder.agent.events import PlanChanged
from zcoder.agent.recorder import Recorder
from zcoder.model import Message, user_message
from zcoder.tools.catalog import calls_in
from zcoder.tools.plan import UPDATE_PLAN_TOOL, Plan, PlanError, is_plan_record

__all__ = ["PLAN_STATE_KEY", "PlanKeeper", "plan_in"]

PLAN_STATE_KEY: Final = "plan"
"""The plan's key in the session's state (SessionStore.save_state)."""


class PlanKeeper:
    """The plan of ``recorder``'s session (zcoder.tools.plan_tool.PlanHolder)."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.plan = Plan()

    def replace(self, plan: Plan) -> None:
        """The model's new plan: saved, then shown."""
        self.plan = plan
        saved = plan.to_saved() if plan else None
        self.recorder.save(lambda store, sid: store.save_state(sid, PLAN_STATE_KEY, saved))
        self.recorder.emit(PlanChanged(plan))

    def load(self, state: Mapping[str, Mapping[str, Any]]) -> None:
        """A session opened: its saved plan (none: an empty one), shown when it is not
        the one shown already (a new session after none, say)."""
        loaded = Plan.from_saved(state.get(PLAN_STATE_KEY))
        if loaded != self.plan:
            self.plan = loaded
            self.recorder.emit(PlanChanged(loaded))

    def rewound(self, kept: Sequence[Message], dropped: Sequence[Message]) -> None:
        """The conversation went back to ``kept``: if the turns ``dropped`` changed the
        plan, it is again what ``kept`` last made it (none: no plan)."""
        if plan_in(dropped) is not None:
            self.replace(plan_in(kept) or Plan())

    def records(self) -> list[Message]:
        """What follows a compaction's summary: the plan as a context record, if any."""
        return [user_message(self.plan.record())] if self.plan else []


def plan_in(messages: Sequence[Message]) -> Plan | None:
    """The plan ``messages`` last set: the newest ``update_plan`` call that was a plan
    (one the tool refused changed nothing), or the record after a compaction's summary;
    None when they set none."""
    for message in reversed(messages):
        if is_plan_record(message):
            return Plan.from_record(str(message.get("content", "")))
        for name, arguments in reversed(list(calls_in(message))):
            if name == UPDATE_PLAN_TOOL and isinstance(arguments, Mapping):
                try:
                    return Plan.from_arguments(arguments.get("items"))
                except PlanError:
                    continue
    return None
