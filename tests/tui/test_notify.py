"""ZCODER_NOTIFY's bytes (zcoder.tui.state.notify): what reaches the terminal for each
mode, inside tmux and out, with hostile words made harmless."""

from __future__ import annotations

from typing import Any

import pytest

from zcoder.tui.state.notify import BELL, Notifier, notification, tmux_wrapped


def test_each_mode_writes_its_bytes() -> None:
    assert notification("off", "zcoder api", "the turn ended") == ""
    assert notification("bell", "zcoder api", "the turn ended") == BELL
    assert notification("desktop", "zcoder api", "the turn ended") == (
        "\x1b]777;notify;zcoder api;the turn ended\x07\x07"
    )
    assert notification("desktop", "zcoder api", "the turn ended", iterm=True) == (
        "\x1b]9;zcoder api: the turn ended\x07\x07"
    )


def test_inside_tmux_the_osc_is_wrapped_only_when_passthrough_is_allowed() -> None:
    osc = "\x1b]777;notify;z;done\x07"
    assert tmux_wrapped(osc) == "\x1bPtmux;\x1b\x1b]777;notify;z;done\x07\x1b\\"
    assert notification("desktop", "z", "done", tmux="on") == tmux_wrapped(osc) + BELL
    assert notification("desktop", "z", "done", tmux="all") == tmux_wrapped(osc) + BELL
    assert notification("desktop", "z", "done", tmux="1") == tmux_wrapped(osc) + BELL
    for refused in ("off", "0", ""):  # tmux would drop it (or an old tmux): the bell only
        assert notification("desktop", "z", "done", tmux=refused) == BELL


@pytest.mark.parametrize(
    "hostile", ["evil\x07\x1b]0;owned\x07", "a;b;c", "\x1b\\x", "x" * 500, "\u202eabc"]
)
def test_words_can_never_end_the_osc_or_add_a_field(hostile: str) -> None:
    data = notification("desktop", hostile, hostile)
    assert data.startswith("\x1b]777;notify;") and data.endswith("\x07\x07")
    inside = data[len("\x1b]777;notify;") : -2]
    assert "\x1b" not in inside and "\x07" not in inside and "\u202e" not in inside
    assert inside.count(";") == 1  # title ; body, nothing more
    assert len(inside) <= 40 + 1 + 80


class _Driver:
    def __init__(self) -> None:
        self.data: list[str] = []

    def write(self, data: str) -> None:
        self.data.append(data)


class _App:
    """What the notifier reads of a Textual app: focus, headless, the driver."""

    def __init__(self) -> None:
        self.app_focus = True
        self.is_headless = False
        self._driver = _Driver()


def _notifier(mode: str, **env: str) -> tuple[Notifier, Any]:
    app = _App()
    notifier = Notifier(mode, "zcoder api", env)
    notifier.start(app)
    return notifier, app


def test_focused_nothing_is_written_blurred_the_call_back_is() -> None:
    notifier, app = _notifier("desktop")
    notifier.call_back("the turn ended")
    assert app._driver.data == []
    app.app_focus = False
    notifier.call_back("the turn ended")
    assert app._driver.data == ["\x1b]777;notify;zcoder api;the turn ended\x07\x07"]


def test_iterm2_gets_osc_9_and_off_gets_nothing() -> None:
    notifier, app = _notifier("desktop", LC_TERMINAL="iTerm2")
    app.app_focus = False
    notifier.call_back("done")
    assert app._driver.data == ["\x1b]9;zcoder api: done\x07\x07"]
    quiet, app = _notifier("off")
    app.app_focus = False
    quiet.call_back("done")
    assert app._driver.data == []
