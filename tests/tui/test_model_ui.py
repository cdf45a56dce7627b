"""ModelUI alone: a fake model client, a fake agent, a message sink and a bare host screen.

The part takes its context: the services, a ``Say`` and a ``Host`` (tui/parts/services.py),
never the app, so what it says and asks is seen here directly: the messages it posts (in order), the
requests the client gets, the dialog it opens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker

from tests.tui.conftest import wait_until
from tests.tui.parts_support import part_context
from zcoder.agent.status import ContextUsage
from zcoder.config import load_config
from zcoder.model import ModelError
from zcoder.tui.dialogs.model_picker import ModelPicker
from zcoder.tui.messages import HeaderFields, ModelChanged, ShowNotice
from zcoder.tui.parts.model_ui import ModelUI
from zcoder.tui.parts.services import ScreenHost, Services

pytestmark = pytest.mark.timeout(30)

WINDOWS = {"small": 8192, "large": 65536}


@dataclass
class FakeClient:
    """Lists ``models`` (or raises ``listing``), reports ``WINDOWS`` as a server with a
    fixed window does, and records each warm-up (or fails it with ``warming``)."""

    models: list[str] = field(default_factory=lambda: ["small", "large"])
    listing: ModelError | None = None
    warming: ModelError | None = None
    warmed: list[tuple[str, int | None, list[dict[str, Any]]]] = field(default_factory=list)

    async def context_length(self, model: str) -> int | None:
        return WINDOWS.get(model)

    async def list_models(self) -> list[str]:
        if self.listing is not None:
            raise self.listing
        return self.models

    async def warm_up(self, model: str, messages: list[dict[str, Any]], **options: Any) -> None:
        if self.warming is not None:
            raise self.warming
        self.warmed.append((model, options["num_ctx"], messages))


@dataclass
class FakeSettings:
    model: str
    num_ctx: int | None = None
    think: bool | None = None
    keep_alive: str | None = None


class FakeAgent:
    def __init__(self, model: str) -> None:
        self.settings = FakeSettings(model)

    def user_turn_request(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return [{"role": "system", "content": "be brief"}, {"role": "user", "content": "x"}], []

    def usage_now(self) -> ContextUsage:
        return ContextUsage(used=100, window=self.settings.num_ctx, measured=False)


class HostScreen(ScreenHost, Screen[None]):
    """Nothing on screen: it runs the part's workers and hands their ends to ``ended``."""

    def __init__(self) -> None:
        super().__init__()
        self.ended: list[Any] = []

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        for handle in self.ended:
            handle(event)


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.host = HostScreen()

    def get_default_screen(self) -> HostScreen:
        return self.host


class Rig:
    """A ModelUI on its own, and everything it touches."""

    def __init__(self, tmp_path: Path, *, busy: bool = False, **client: Any) -> None:
        config = load_config(
            {
                "ZCODER_HOME": str(tmp_path / "home"),
                "ZCODER_MODEL": "small",
                "ZCODER_RELAY": "off",
                "OLLAMA_HOST": "http://127.0.0.1:9",  # never asked: the client is fake
            },
            workspace=str(tmp_path),
        )
        self.client = FakeClient(**client)
        self.services = Services(config, busy=lambda: busy, client=self.client)  # type: ignore[arg-type]
        self.agent = FakeAgent("small")
        self.services.agent = self.agent  # type: ignore[assignment]
        self.posted: list[Message] = []
        self.app = Host()
        self.model_ui = ModelUI(part_context(self.services, self.posted, self.app.host))
        self.app.host.ended.append(self.model_ui.warmup_ended)

    def notices(self) -> list[tuple[str, bool]]:
        return [(m.text, m.error) for m in self.posted if isinstance(m, ShowNotice)]

    def meters(self) -> list[ContextUsage]:
        return [
            m.changes["context"]
            for m in self.posted
            if isinstance(m, HeaderFields) and "context" in m.changes
        ]

    def statuses(self) -> list[tuple[str, bool]]:
        return [
            (m.changes["status"], m.idle_only)
            for m in self.posted
            if isinstance(m, HeaderFields) and "status" in m.changes
        ]


async def test_a_new_model_is_sized_warmed_with_its_window_and_announced(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    async with rig.app.run_test() as pilot:
        rig.model_ui.set_model("large")
        assert rig.services.model == "large" and rig.agent.settings.model == "large"
        await wait_until(pilot, lambda: ("Ready", True) in rig.statuses())
        await wait_until(pilot, rig.meters)
    [(model, num_ctx, messages)] = rig.client.warmed
    assert (model, num_ctx) == ("large", WINDOWS["large"])
    assert messages == [{"role": "system", "content": "be brief"}]  # the prefix a turn sends
    assert rig.agent.settings.num_ctx == WINDOWS["large"]
    window = rig.model_ui.context_window
    assert window is not None and window.tokens == WINDOWS["large"]
    # The change goes up first (the session, the relay and the header follow it), then
    # the notice; the warm-up's Ready does not undo a turn started meanwhile (idle_only).
    kinds = [type(m) for m in rig.posted if not isinstance(m, HeaderFields)]
    assert kinds[:2] == [ModelChanged, ShowNotice]
    assert rig.notices()[0] == ("Model: large", False)
    assert rig.statuses() == [("Warming Up", False), ("Ready", True)]
    # The meter is measured again once the window is known, and posted for the header.
    assert rig.meters() == [ContextUsage(used=100, window=WINDOWS["large"], measured=False)]


async def test_a_failed_warm_up_is_an_error_in_the_transcript_and_the_header(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, warming=ModelError("the model could not be loaded"))
    async with rig.app.run_test() as pilot:
        rig.model_ui.start_warmup()
        await wait_until(pilot, lambda: ("Error", False) in rig.statuses())
    assert ("the model could not be loaded", True) in rig.notices()
    assert ("Ready", True) not in rig.statuses()


async def test_the_model_stays_while_a_turn_runs(tmp_path: Path) -> None:
    rig = Rig(tmp_path, busy=True)
    rig.model_ui.set_model("large")
    await rig.model_ui.pick()
    assert rig.services.model == "small" and rig.agent.settings.model == "small"
    assert rig.notices() == [("The model can be changed when no turn is running.", False)] * 2
    assert not any(isinstance(m, ModelChanged) for m in rig.posted)


@pytest.mark.parametrize(
    ("client", "said"),
    [
        ({"models": []}, ("Ollama has no models; pull one with `ollama pull NAME`.", False)),
        ({"listing": ModelError("Ollama is not running")}, ("Ollama is not running", True)),
    ],
    ids=["none", "unreachable"],
)
async def test_the_picker_opens_only_on_a_list_of_models(
    tmp_path: Path, client: dict[str, Any], said: tuple[str, bool]
) -> None:
    rig = Rig(tmp_path, **client)
    async with rig.app.run_test():
        await rig.model_ui.pick()
        assert not isinstance(rig.app.screen, ModelPicker)
    assert rig.notices() == [said]


async def test_the_picker_shows_the_servers_models_and_the_choice_switches(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path)
    async with rig.app.run_test() as pilot:
        await rig.model_ui.pick()
        await wait_until(pilot, lambda: isinstance(rig.app.screen, ModelPicker))
        picker = rig.app.screen
        assert isinstance(picker, ModelPicker)
        assert (picker.models, picker.current) == (["small", "large"], "small")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: rig.client.warmed)
    assert rig.services.model == "large"
    assert [m.model for m in rig.posted if isinstance(m, ModelChanged)] == ["large"]
