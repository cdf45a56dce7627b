"""/rewind (and Escape twice on an empty prompt) and /fork in the TUI.

/rewind lists the user's earlier prompts (agent/rewind.py), newest first; the one chosen
gets a preview (tui/dialogs/rewind.py) of what the conversation loses and which files
go back (the /undo store: EditJournal.plan_rewind). Then, as the user chose: the files
restored (a file changed since the agent's edit is kept as it is), the conversation cut
(the agent's history and ledger, the saved session, and the transcript shown again from
it) and the prompt put back in the box to edit. /fork opens a copy of the session
(SessionStore.fork); the one left stays saved as it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from zcoder.agent.plan_keeper import plan_in
from zcoder.agent.rewind import RewindPoint, cut_conversation, rewind_points
from zcoder.base.plural import counted
from zcoder.sessions import SessionStoreError
from zcoder.sessions.locks import SessionInUseError
from zcoder.slash.declared import RewindCommands
from zcoder.tools.job_tools import running_jobs_started_in
from zcoder.tools.offload import StopSignal, in_thread
from zcoder.tui.dialogs.rewind import (
    REWIND_BOTH,
    REWIND_CANCEL,
    REWIND_FILES,
    RewindPicker,
)
from zcoder.tui.parts.services import Part

if TYPE_CHECKING:
    from zcoder.agent import Agent
    from zcoder.agent.edits import UndoPlan
    from zcoder.tui.parts.sessions_ui import SessionsUI


@dataclass(eq=False)
class RewindUI(Part, RewindCommands):
    """Takes, besides its context: ``sessions`` (the open session: shown again after a
    cut, or the fork opened), ``confirm`` (the preview, tui/parts/approvals.py) and
    ``put_back`` (text into the prompt, a draft there kept in the history)."""

    _: KW_ONLY
    sessions: SessionsUI
    confirm: Callable[[RewindPoint, UndoPlan | None], Awaitable[str]]
    put_back: Callable[[str], object]
    _asking: bool = field(default=False, init=False)

    async def rewind_command(self, _argument: str = "") -> None:
        agent = self.services.agent
        if agent is None:
            return
        if why := self._cannot_start():
            self.say.notice(why)
            return
        points = rewind_points(agent.messages, agent.user_ledger)
        if not points:
            self.say.notice("Nothing to rewind: no prompt of yours in this session yet.")
            return
        session = agent.edits.store  # replaced if another session is opened meanwhile
        self._asking = True
        try:
            answer, point, plan = await self._ask(agent, points)
        finally:
            self._asking = False
        if answer == REWIND_CANCEL or point is None:
            self.say.notice("Nothing was rewound.")
            return
        if self.services.busy():  # a relayed task may have started while it was asked
            self.say.notice("A turn started meanwhile; nothing was rewound.")
            return
        if agent.edits.store is not session:
            self.say.notice("Another session was opened meanwhile; nothing was rewound.")
            return
        self._carry_out(agent, answer, point, plan)

    def _cannot_start(self) -> str:
        """Why a rewind cannot start now; "" when it can."""
        if self.services.busy():
            return "/rewind runs when no turn is running; Escape stops this one first."
        if self._asking:
            return "A rewind is already waiting for your answer."
        return ""

    async def _ask(
        self, agent: Agent, points: list[RewindPoint]
    ) -> tuple[str, RewindPoint | None, UndoPlan | None]:
        chosen: asyncio.Future[RewindPoint | None] = asyncio.get_running_loop().create_future()

        def picked(point: RewindPoint | None) -> None:
            if not chosen.done():
                chosen.set_result(point)

        self.host.ask(RewindPicker(points), picked)
        point = await chosen
        if point is None:
            return REWIND_CANCEL, None, None
        if point.message is not None:
            point = replace(point, also=self._also(agent, point.message))
        # Reading and diffing the files is file-system work: off the loop.
        plan = await in_thread(
            StopSignal(), partial(agent.edits.plan_rewind, point.prompt, point.name), name="plan"
        )
        if point.message is None and plan is None:
            self.say.notice(
                "That prompt is older than the last compaction's summary and no file was "
                "changed after it: there is nothing to rewind."
            )
            return REWIND_CANCEL, None, None
        return await self.confirm(point, plan), point, plan

    def _also(self, agent: Agent, cut: int) -> tuple[str, ...]:
        """What going back to ``cut`` in the history does besides (the preview says)."""
        kept, dropped = agent.messages[:cut], agent.messages[cut:]
        also = []
        if plan_in(dropped) is not None:
            also.append("The plan goes back too.")
        if self.services.goal.only_in(kept, dropped):
            also.append("The goal set after it is dropped.")
        if jobs := running_jobs_started_in(dropped):
            verb = "keeps" if len(jobs) == 1 else "keep"
            also.append(f"{counted(len(jobs), 'background job')} started after it {verb} running.")
        return tuple(also)

    def _carry_out(
        self, agent: Agent, answer: str, point: RewindPoint, plan: UndoPlan | None
    ) -> None:
        report = None
        if plan is not None and answer in (REWIND_BOTH, REWIND_FILES):
            report = agent.edits.undo(plan)
        if answer == REWIND_FILES:
            assert report is not None
            agent.note_for_model(report.note_for_model(), report.text())
            return
        kept_plan = agent.plan.plan
        dropped = cut_conversation(agent, point)
        self.sessions.show_again()
        said = (
            f"Rewound the conversation to before “{point.short}”: "
            f"{counted(point.prompts_after, 'prompt')} and what followed dropped."
        )
        if agent.plan.plan != kept_plan:
            said += " The plan is what it was then." if agent.plan.plan else " So is the plan."
        if goal := self.services.goal.rewound(agent.messages, dropped):
            said += " " + goal
        if jobs := running_jobs_started_in(dropped):
            numbers = ", ".join(str(number) for number in jobs)
            word, verb = ("job", "keeps") if len(jobs) == 1 else ("jobs", "keep")
            said += (
                f" Background {word} {numbers}, started by those turns, {verb} running"
                " (/jobs stop N ends one)."
            )
        if report is not None:
            said += " " + report.text()
        elif plan is not None:
            said += " The files were kept as they are (/diff shows them)."
        agent.recorder.notice(said)
        self.put_back(point.text)

    def fork_command(self, argument: str = "") -> None:
        store, source = self.services.store, self.services.session_id
        if self.services.busy():
            self.say.notice("/fork runs when no turn is running.")
            return
        if store is None or source is None:
            self.say.error("sessions are unavailable in this run, so there is nothing to fork")
            return
        try:
            made = store.fork(source, *self.sessions.scope, title=argument.strip())
            self.sessions.load(made.id, restore_model=False)
        except (SessionInUseError, LookupError, SessionStoreError) as exc:
            self.say.error(f"could not fork this session: {exc}")
            return
        self.say.notice(
            f"Forked: this is {made.id}, “{made.title}”, a copy of the conversation with an "
            f"edit journal of its own. {source} stays as it was (/sessions {source} opens it)."
        )
