"""The header alone: its changing fields are reactives; only a real change draws it again.

The main screen sets them from the parts' messages (tests/tui/test_status.py has the
header inside the whole app); here it is mounted by itself in a bare app.
"""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from tests.tui.conftest import wait_until
from tests.tui.test_status import state
from zcoder.agent.status import ContextUsage
from zcoder.tui.widgets.status import HeaderBar

pytestmark = pytest.mark.timeout(30)


class HeaderApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.header = HeaderBar(state(relay="ready", context=None, model="small"))
        self.drawn = 0
        original = self.header.render

        def render() -> Text:
            self.drawn += 1
            return original()

        self.header.render = render  # type: ignore[method-assign]

    def compose(self) -> ComposeResult:
        yield self.header


async def test_a_field_set_to_the_value_it_has_draws_nothing() -> None:
    app = HeaderApp()
    async with app.run_test(size=(200, 5)) as pilot:
        header = app.header
        await wait_until(pilot, lambda: app.drawn)
        await pilot.pause()
        drawn = app.drawn
        header.refresh_state(relay="ready", queued=0, held=0, waiting=False)  # as the poll does
        await pilot.pause()
        assert app.drawn == drawn
        header.refresh_state(queued=2)
        await wait_until(pilot, lambda: "2 queued" in header.render_line(0).text)
        assert app.drawn > drawn


async def test_the_fields_are_what_the_header_shows() -> None:
    app = HeaderApp()
    async with app.run_test(size=(200, 5)) as pilot:
        header = app.header
        header.model = "large"
        header.context = ContextUsage(used=3200, window=32768, measured=True)
        header.asking = True
        shown = header.state
        assert (shown.model, shown.label, shown.project) == (
            "large",
            "Waiting for you",
            "billing-service",
        )
        await wait_until(pilot, lambda: "large@127.0.0.1:11434" in header.render_line(0).text)
        assert "ctx 3.2k/32k 10%" in header.render_line(0).text


async def test_the_spinner_runs_only_while_something_is_under_way() -> None:
    app = HeaderApp()
    async with app.run_test(size=(200, 5)) as pilot:
        header = app.header

        def spinning() -> bool:
            return header.spinning

        assert not spinning()
        header.turn_started()
        assert spinning() and header.status == "Waiting for model"
        header.status = "Thinking"
        assert spinning()
        header.turn_ended(stopped=True, failed=False)
        assert not spinning() and header.status == "Stopped"
        await pilot.pause()
