"""A part made alone, the way the app makes it: ``Part(context, *, its own wires)``.

``part_context`` gives the ``PartContext`` (tui/parts/services.py): real ``Services`` for a
workspace, a ``Say`` that records what the part posts, and a host. ``StandInHost`` records
the dialogs a part asks with and fails the test if the part runs a worker it was not
expected to.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.screen import Screen

from zcoder.config import load_config
from zcoder.tui.messages import Say
from zcoder.tui.parts.services import Host, PartContext, Services


def services_for(
    workspace: Path,
    home: Path,
    *,
    busy: Callable[[], bool] = lambda: False,
    client: Any = None,
    **environ: str,
) -> Services:
    """The services of a run in ``workspace`` (the relay off, unless ``environ`` says)."""
    config = load_config(
        {"ZCODER_HOME": str(home), "ZCODER_RELAY": "off", **environ}, workspace=str(workspace)
    )
    return Services(config, busy=busy, client=client)


class StandInHost:
    """A ``Host`` with no screen: the dialogs asked are kept in ``asked``; a worker fails."""

    def __init__(self) -> None:
        self.asked: list[tuple[Screen[Any], Callable[[Any], None]]] = []

    def run_later(
        self,
        work: Callable[[], Coroutine[Any, Any, object]],
        *,
        group: str = "default",
        exit_on_error: bool = False,
    ) -> Any:
        raise AssertionError(f"the part ran a worker ({group}) with no screen to run it")

    def run_in_thread(self, work: Callable[[], object], *, group: str) -> Any:
        raise AssertionError(f"the part ran a thread ({group}) with no screen to run it")

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any) -> bool:
        raise AssertionError("the part waited for a screen that is not there")

    def when_shown(self, mounting: Awaitable[object] | None, then: Callable[[], object]) -> None:
        raise AssertionError("the part waited for a screen that is not there")

    def ask(self, dialog: Screen[Any], answered: Callable[[Any], None]) -> object:
        self.asked.append((dialog, answered))
        return None

    def columns(self) -> int:
        return 80


def part_context(
    services: Services,
    posted: list[Message],
    host: Host | None = None,
    *,
    header: Callable[[Message], object] | None = None,
) -> PartContext:
    """The context of a part alone: what it posts lands in ``posted`` (the header's
    fields too, unless ``header`` takes them); ``host`` by default a ``StandInHost``."""
    return PartContext(services, Say(posted.append, header), host or StandInHost())
