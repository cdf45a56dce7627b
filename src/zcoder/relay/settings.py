"""Relay settings, read from the environment and validated once.

An invalid value never raises out of here: it yields settings whose ``disabled_reason``
names the setting, so the relay stays off and everything else in zcoder works as usual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum


class RelayMode(Enum):
    ON = "on"
    OFF = "off"
    PAUSED = "paused"


class Inbound(Enum):
    """ZCODER_RELAY_INBOUND: what happens to a message from a peer with no policy of its
    own (/agents trust and /agents block set one per peer)."""

    ACCEPT = "accept"  # queued and run as they come (the design's default)
    HOLD = "hold"  # queued, but each waits for the user to run or discard it
    REFUSE = "refuse"  # refused: `paused` on the wire, with a reason that says so


DEFAULT_MAX_BYTES = 65536
DEFAULT_MAX_MESSAGE_CHARS = 16000
DEFAULT_MAX_QUEUE = 16
DEFAULT_IO_TIMEOUT = 2.0
DEFAULT_MAX_AUTO_TURNS = 8

MAX_BYTES_RANGE = (1024, 1048576)
MAX_QUEUE_RANGE = (1, 256)
IO_TIMEOUT_RANGE = (1.0, 30.0)
MAX_AUTO_TURNS_RANGE = (0, 1000)


@dataclass(frozen=True)
class RelaySettings:
    """Validated relay settings. ``disabled_reason`` is set when the relay must stay off."""

    mode: RelayMode = RelayMode.ON
    directory: str | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS
    max_queue: int = DEFAULT_MAX_QUEUE
    io_timeout: float = DEFAULT_IO_TIMEOUT
    # Relayed turns an interactive instance runs in a row without its user; 0: no limit.
    max_auto_turns: int = DEFAULT_MAX_AUTO_TURNS
    inbound: Inbound = Inbound.ACCEPT
    disabled_reason: str | None = None

    @property
    def enabled(self) -> bool:
        return self.disabled_reason is None and self.mode is not RelayMode.OFF


class _Invalid(Exception):
    pass


def _integer(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    text = raw.strip()
    if not text.isascii() or not text.isdigit():
        raise _Invalid(f"{name} must be a whole number from {low} to {high} (got {raw!r})")
    value = int(text)
    if not low <= value <= high:
        raise _Invalid(f"{name} must be from {low} to {high} (got {value})")
    return value


def _seconds(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise _Invalid(f"{name} must be a number of seconds from 1 to 30 (got {raw!r})") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise _Invalid(f"{name} must be a number of seconds from 1 to 30 (got {raw!r})")
    return value


def load_relay_settings(env: Mapping[str, str]) -> RelaySettings:
    """Read ZCODER_RELAY* from ``env``; never raises."""
    try:
        raw_mode = env.get("ZCODER_RELAY", "on").strip().lower() or "on"
        try:
            mode = RelayMode(raw_mode)
        except ValueError:
            raise _Invalid(
                f"ZCODER_RELAY must be on, off or paused (got {env.get('ZCODER_RELAY')!r})"
            ) from None
        directory = env.get("ZCODER_RELAY_DIR") or None
        if directory is not None and "\x00" in directory:
            raise _Invalid("ZCODER_RELAY_DIR contains a NUL byte")
        max_bytes = _integer(env, "ZCODER_RELAY_MAX_BYTES", DEFAULT_MAX_BYTES, *MAX_BYTES_RANGE)
        max_chars = _integer(
            env, "ZCODER_RELAY_MAX_MESSAGE_CHARS", DEFAULT_MAX_MESSAGE_CHARS, 1, max_bytes
        )
        max_queue = _integer(env, "ZCODER_RELAY_MAX_QUEUE", DEFAULT_MAX_QUEUE, *MAX_QUEUE_RANGE)
        io_timeout = _seconds(env, "ZCODER_RELAY_IO_TIMEOUT", DEFAULT_IO_TIMEOUT, *IO_TIMEOUT_RANGE)
        max_auto_turns = _integer(
            env, "ZCODER_RELAY_MAX_AUTO_TURNS", DEFAULT_MAX_AUTO_TURNS, *MAX_AUTO_TURNS_RANGE
        )
        raw_inbound = env.get("ZCODER_RELAY_INBOUND", "accept").strip().lower() or "accept"
        try:
            inbound = Inbound(raw_inbound)
        except ValueError:
            raise _Invalid(
                "ZCODER_RELAY_INBOUND must be accept, hold or refuse "
                f"(got {env.get('ZCODER_RELAY_INBOUND')!r})"
            ) from None
    except _Invalid as exc:
        return RelaySettings(mode=RelayMode.OFF, disabled_reason=str(exc))
    return RelaySettings(
        mode=mode,
        directory=directory,
        max_bytes=max_bytes,
        max_message_chars=max_chars,
        max_queue=max_queue,
        io_timeout=io_timeout,
        max_auto_turns=max_auto_turns,
        inbound=inbound,
    )
