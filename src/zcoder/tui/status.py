"""The header bar: status badge, model, project, profile, context meter and relay state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.widgets import Static

from zcoder.agent import ContextUsage
from zcoder.tui.widgets import screen_safe


@dataclass
class HeaderState:
    version: str
    model: str
    host: str
    project: str
    branch: str | None
    profile: str
    status: str = "Ready"
    relay: str = "off"
    queued: int = 0
    waiting: bool = False  # queued relayed tasks wait for the user (the auto-turn limit)
    context: ContextUsage | None = None  # the meter: tokens used of the window


class HeaderBar(Static):
    """zcoder · model@host · project (branch) · profile · [status] · relay state · queued
    (· waiting for you)."""

    DEFAULT_CSS = """
    HeaderBar { height: 1; background: $primary-background; color: $text; padding: 0 1; }
    """

    def __init__(self, state: HeaderState) -> None:
        super().__init__("")
        self.state = state

    def on_mount(self) -> None:
        self.refresh_state()

    def refresh_state(self, **changes: Any) -> None:
        for key, value in changes.items():
            setattr(self.state, key, value)
        s = self.state
        sep = Text(" │ ", style="dim")
        text = Text.assemble(
            (f"zcoder {s.version}", "bold"), sep, screen_safe(f"{s.model}@{s.host}"), sep
        )
        text.append(screen_safe(s.project + (f" ({s.branch})" if s.branch else "")))
        text.append_text(sep)
        text.append(s.profile)
        text.append_text(sep)
        badge_style = {
            "Ready": "bold black on green",
            "Warming Up": "bold black on yellow",
            "Thinking": "bold black on cyan",
            "Error": "bold white on red",
            "Stopped": "bold black on yellow",
            "Blocked": "bold white on red",
            "Loop stopped": "bold white on red",
            "Incomplete": "bold black on yellow",
        }.get(s.status, "bold black on cyan")
        text.append(screen_safe(f" {s.status} "), style=badge_style)
        if s.context is not None:
            meter, meter_style = meter_text(s.context)
            text.append(" ")
            text.append(meter, style=meter_style)
        text.append_text(sep)
        text.append(f"relay: {s.relay}")
        if s.queued:
            text.append(f" · {s.queued} queued", style="bold magenta")
            if s.waiting:
                text.append(" · waiting for you", style="bold black on yellow")
        self.update(text)


# The meter turns yellow where automatic compaction is near, red where the window is full.
METER_WARN_PERCENT = 75
METER_FULL_PERCENT = 90


def _short(tokens: int) -> str:
    if tokens >= 1024 and tokens % 1024 == 0:
        return f"{tokens // 1024}k"  # windows come in binary sizes: 32768 is "32k"
    if tokens < 1000:
        return str(tokens)
    if tokens < 10000:
        return f"{tokens / 1000:.1f}k"
    return f"{round(tokens / 1000)}k"


def meter_text(usage: ContextUsage) -> tuple[str, str]:
    """``ctx 3.2k/32k 10%`` (``~`` before an estimate), and its style."""
    used = ("~" if not usage.measured else "") + _short(usage.used)
    percent = usage.percent
    if usage.window is None or percent is None:
        return f"ctx {used}", "dim"
    style = "dim"
    if percent >= METER_FULL_PERCENT:
        style = "bold white on red"
    elif percent >= METER_WARN_PERCENT:
        style = "bold black on yellow"
    return f"ctx {used}/{_short(usage.window)} {percent}%", style
