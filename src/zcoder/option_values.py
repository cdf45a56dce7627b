"""How the options table reads a raw value (zcoder.options): one parser per kind of value.

A parser gets the text the user gave (a flag's, an environment variable's) and the row it
is read for, and returns the value or raises ``ConfigError`` naming the row's variable.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from zcoder.base.errors import ConfigError
from zcoder.model.context import parse_keep_alive
from zcoder.tools import EditPolicy
from zcoder.tools.web.rules import parse_host_list

__all__ = [
    "NOTIFY_MODES",
    "OptionRow",
    "compact_at",
    "edit_policy",
    "host_list",
    "keep_alive",
    "lenient_seconds",
    "lenient_share",
    "notify_mode",
    "on_off",
    "positive_int",
    "positive_seconds",
    "stripped",
    "subagent_count",
]


class OptionRow(Protocol):
    """What a parser reads of its row (zcoder.options.Option)."""

    @property
    def env(self) -> str | None: ...

    @property
    def default(self) -> Any: ...


def positive_int(raw: str, row: OptionRow) -> int:
    text = raw.strip()
    if not text.isdigit() or int(text) <= 0:
        raise ConfigError(f"{row.env} must be a positive whole number (got {text!r})")
    return int(text)


def positive_seconds(raw: str, row: OptionRow) -> float:
    text = raw.strip()
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value > 0 and value < float("inf")):
        raise ConfigError(f"{row.env} must be a positive number of seconds (got {text!r})")
    return value


def compact_at(raw: str, row: OptionRow) -> float | None:
    """A percentage from 50 to 99 (``85`` or ``85%``), or ``off``."""
    value = raw.strip().lower().removesuffix("%")
    if value in ("off", "no", "never", "0"):
        return None
    if value.isdigit() and 50 <= int(value) <= 99:
        return int(value) / 100
    raise ConfigError(f"{row.env} must be a percentage from 50 to 99, or off (got {raw.strip()!r})")


def edit_policy(raw: str, row: OptionRow) -> EditPolicy:
    try:
        return EditPolicy(raw.strip().lower())
    except ValueError:
        raise ConfigError(f"{row.env} must be auto or ask (got {raw!r})") from None


NOTIFY_MODES: Final = ("off", "bell", "desktop")
"""ZCODER_NOTIFY: how zcoder calls you back to an unfocused terminal (zcoder.tui.notify)."""


def notify_mode(raw: str, row: OptionRow) -> str:
    value = raw.strip().lower()
    if value not in NOTIFY_MODES:
        raise ConfigError(f"{row.env} must be off, bell or desktop (got {raw!r})")
    return value


def on_off(raw: str, row: OptionRow) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{row.env} must be on or off (got {raw!r})")


def host_list(raw: str, row: OptionRow) -> tuple[str, ...]:
    """Hosts, addresses or networks, separated by commas or spaces (zcoder.tools.web.rules)."""
    try:
        return parse_host_list(raw)
    except ValueError as exc:
        raise ConfigError(f"{row.env}: {exc}") from None


def keep_alive(raw: str, row: OptionRow) -> str | int:
    try:
        return parse_keep_alive(raw.strip())
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def stripped(raw: str, row: OptionRow) -> str:
    return raw.strip()


def lenient_seconds(raw: str, row: OptionRow) -> float:
    """A positive number; anything else is the default, silently (the MCP deadlines)."""
    try:
        value = float(raw.strip())
    except ValueError:
        return float(row.default)
    return value if value > 0 else float(row.default)


def subagent_count(raw: str, row: OptionRow) -> int | None:
    """ZCODER_SUBAGENTS: a number, ``auto`` (None: the server's slots) or ``off`` (0)."""
    value = {"auto": "", "off": "0"}.get(raw.strip().lower(), raw.strip())
    if value and not value.isdigit():
        raise ConfigError(f"{row.env} must be a number, auto or off (got {raw.strip()!r})")
    return int(value) if value else None


def lenient_share(raw: str, row: OptionRow) -> float:
    """A share above 0 and at most 1; anything else is the default, silently."""
    try:
        value = float(raw.strip())
    except ValueError:
        return float(row.default)
    return value if 0 < value <= 1 else float(row.default)
