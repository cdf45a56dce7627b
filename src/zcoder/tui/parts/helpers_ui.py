"""/claude, /codex, /opencode TASK and /helpers: other coding agents as helpers.

A helper runs as a turn of its own (``start``, the screen's: Escape stops it, prompts
queue behind it) that asks the model nothing: the agent asks the user, runs it and records
it (zcoder.agent.helper_command). /helpers looks on PATH, off the event loop (each
``--version`` may take a moment).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from functools import partial

from zcoder.slash.declared import HelperCommands
from zcoder.tools.helpers.clis import HELPERS, find_helper, installed, version
from zcoder.tui.parts.services import Part

__all__ = ["HelpersUI", "helpers_listing"]


def helpers_listing(enabled: tuple[str, ...]) -> str:
    """What /helpers shows: each helper, installed with its version, or not. Blocks."""
    found = installed()
    lines = []
    for helper in HELPERS:
        path = found.get(helper.name)
        if path is None:
            state = "not installed (no `" + helper.name + "` on PATH)"
        else:
            said = version(path)
            state = f"installed: {path}" + (f" ({said})" if said else "")
            if helper.name not in enabled:
                state += "; turned off (ZCODER_HELPERS)"
        lines.append(f"/{helper.name}  {helper.title}: {state}")
    usable = [name for name in found if name in enabled]
    tail = (
        "The model may use them too (delegate_task) when you ask it to; each run is asked."
        if usable
        else "None can be used here: /claude, /codex and /opencode say so, the model is not "
        "offered delegate_task."
    )
    return "\n".join(["Other coding agents as helpers:", *lines, tail])


@dataclass(eq=False)
class HelpersUI(Part, HelperCommands):
    _: KW_ONLY
    start: Callable[..., None]
    """``start(work, *, relay, model)``: run ``work`` as the turn (the screen's)."""

    def claude_command(self, argument: str, /) -> None:
        self._hand("claude", argument)

    def codex_command(self, argument: str, /) -> None:
        self._hand("codex", argument)

    def opencode_command(self, argument: str, /) -> None:
        self._hand("opencode", argument)

    def helpers_command(self, argument: str, /) -> None:
        self.host.run_later(self._list, group="helpers")

    async def _list(self) -> None:
        enabled = self.services.config.helpers
        self.say.notice(await asyncio.to_thread(helpers_listing, enabled))

    def _hand(self, name: str, task: str) -> None:
        helper = find_helper(name)
        task = task.strip()
        if not task:
            self.say.error(f"usage: /{name} TASK (what {helper.title} should do)")
            return
        if name not in self.services.config.helpers:
            self.say.error(f"{helper.title} is turned off (ZCODER_HELPERS); /helpers lists them")
            return
        if name not in installed((name,)):
            self.say.error(
                f"{helper.title} is not installed: there is no `{name}` on PATH (/helpers "
                "lists the helpers found)"
            )
            return
        if self.services.agent is None:
            return
        if self.services.busy():
            self.say.notice(f"/{name} runs when no turn is running; try again when this one ends.")
            return
        self.start(partial(self._run, name, task), relay=False, model=False)

    async def _run(self, name: str, task: str) -> None:
        agent = self.services.agent
        assert agent is not None
        await agent.run_helper(name, task, timeout=self.services.config.helper_timeout)
