"""/instructions and /init in the app (declared in zcoder.slash.declared).

/instructions lists the instruction files the model follows (agent/instructions.py);
/init (idle only) runs a turn in which the model drafts an AGENTS.md, then asks in the
edit dialog before writing it (agent/init_draft.py).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from functools import partial
from typing import TYPE_CHECKING

from zcoder.agent.init_draft import run_init
from zcoder.agent.instructions import describe_instructions
from zcoder.slash.declared import InstructionCommands
from zcoder.tui.parts.services import Part

if TYPE_CHECKING:
    from zcoder.tui.parts.model_ui import ModelUI
    from zcoder.tui.parts.turns import StartTurn


@dataclass(eq=False)
class InstructionsUI(Part, InstructionCommands):
    """Takes, besides its context, ``start`` (the screen's: run a body as the turn) and
    the model's part (the window sized before the turn's first request)."""

    _: KW_ONLY
    start: StartTurn
    model: ModelUI

    async def instructions_command(self, _argument: str = "") -> None:
        agent = self.services.agent
        if agent is None:
            return
        await self.model.window_ready()  # what fits depends on the window
        settings = agent.settings
        self.say.notice(describe_instructions(settings.instruction_set, settings.num_ctx))

    def init_command(self, focus: str = "") -> None:
        if self.services.agent is None:
            return
        if self.services.busy():
            self.say.notice("/init runs when no turn is running; try again when this one ends.")
            return
        self.say.notice("/init: the model looks at the repository and drafts an AGENTS.md.")
        self.start(partial(self._init_turn, focus), relay=False)

    async def _init_turn(self, focus: str) -> None:
        agent = self.services.agent
        assert agent is not None  # checked when the command started
        await self.model.window_ready()
        outcome = await run_init(agent, focus)
        self.say.notice(outcome.text)
        self.model.refresh_meter()
