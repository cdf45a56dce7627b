"""The helper agents zcoder can hand a task to, and how each one's output reads.

Each is started in its non-interactive mode with a JSON event stream on its standard
output, one object a line: Claude Code's ``claude -p --output-format stream-json``, Codex's
``codex exec --json``, opencode's ``opencode run --format json``. A line is turned into
what a person reads (the agent's words, the tools it used), and the agent's last words are
its final answer. A line that is not one of its events is shown as it came. Every line
shown is made visible (zcoder.base.sanitize.visible) where it is read: a carriage return or
an escape sequence in a helper's output can hide nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from zcoder.base.errors import ConfigError

__all__ = [
    "DEFAULT_HELPER_TIMEOUT",
    "HELPERS",
    "HELPER_NAMES",
    "Helper",
    "HelperReading",
    "find_helper",
    "helper_list",
    "helper_setting",
    "installed",
]

DEFAULT_HELPER_TIMEOUT: Final = 900.0
"""Seconds a helper may run before its process group is killed (ZCODER_HELPER_TIMEOUT)."""
VERSION_SECONDS: Final = 3.0
"""How long ``--version`` may take for /helpers before it is left unsaid."""
INPUT_CHARS: Final = 160
"""How much of a tool's input a transcript line shows."""


@dataclass
class HelperReading:
    """What a helper's output said so far: lines for a person, and its final answer."""

    answer: str = ""
    failed: str = ""
    """The helper's own report of an error (its ``error`` event), "" when none."""
    texts: list[str] = field(default_factory=list)
    """Its words, in order: without a final event, the last of them is the answer."""

    def final(self) -> str:
        return self.answer or (self.texts[-1] if self.texts else "")


class _Named(Protocol):
    """An option's row (zcoder.options.Option), as far as its parser reads it."""

    @property
    def env(self) -> str | None: ...


Reader = Callable[[dict[str, Any], HelperReading], list[str]]


@dataclass(frozen=True)
class Helper:
    """One coding agent's command line interface."""

    name: str
    """The slash command's name and the program's: ``claude``."""
    title: str
    """What people call it: ``Claude Code``."""
    options: tuple[str, ...]
    """Its non-interactive mode with a JSON event stream, before ``--`` and the task."""
    reader: Reader

    def argv(self, program: str, task: str) -> list[str]:
        """The exact command line: ``program``, the options, ``--`` and the task (so a task
        that starts with ``-`` is never read as an option)."""
        return [program, *self.options, "--", task]

    def read_line(self, line: str, reading: HelperReading) -> list[str]:
        """The lines a person reads for one output line (it updates ``reading``)."""
        text = line.rstrip("\r\n")
        if not text.strip():
            return []
        try:
            event = json.loads(text)
        except ValueError:
            return [text]
        if not isinstance(event, dict):
            return [text]
        try:
            return self.reader(event, reading)
        except (AttributeError, KeyError, TypeError, ValueError):
            return [text]  # an event of a shape this version does not know


def _short(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= INPUT_CHARS else text[: INPUT_CHARS - 1] + "…"


def _said(reading: HelperReading, text: object) -> list[str]:
    if not isinstance(text, str) or not text.strip():
        return []
    reading.texts.append(text.strip())
    return text.strip().splitlines()


def _claude(event: dict[str, Any], reading: HelperReading) -> list[str]:
    kind = event.get("type")
    if kind == "assistant":
        lines: list[str] = []
        for block in event["message"]["content"]:
            if block.get("type") == "text":
                lines += _said(reading, block.get("text"))
            elif block.get("type") == "tool_use":
                lines.append(f"→ {block.get('name')} {_short(block.get('input', {}))}")
        return lines
    if kind == "result":
        if event.get("is_error"):
            reading.failed = str(event.get("result") or event.get("subtype") or "error")
            return [f"✗ {reading.failed}"]
        reading.answer = str(event.get("result") or "").strip()
        said = reading.texts[-1] if reading.texts else ""
        return [] if reading.answer == said else reading.answer.splitlines()
    if kind == "system" and event.get("subtype") == "init":
        return [f"(started: {event.get('model', 'its default model')})"]
    return []  # tool results, partial messages: the tool line said enough


def _codex(event: dict[str, Any], reading: HelperReading) -> list[str]:
    kind = event.get("type")
    if kind == "item.completed":
        item = event["item"]
        what = item.get("type")
        if what == "agent_message":
            return _said(reading, item.get("text"))
        if what == "command_execution":
            return [f"→ $ {_short(item.get('command', ''))} (exit {item.get('exit_code')})"]
        if what == "file_change":
            changes = item.get("changes", [])
            return [f"→ {c.get('kind', 'change')} {c.get('path', '')}" for c in changes]
        if what in ("mcp_tool_call", "web_search"):
            return [f"→ {what} {_short(item.get('tool') or item.get('query') or '')}"]
        return []
    if kind in ("turn.failed", "error"):
        error = event.get("error")
        message = error.get("message") if isinstance(error, dict) else event.get("message")
        reading.failed = str(message or kind)
        return [f"✗ {reading.failed}"]
    return []


def _opencode(event: dict[str, Any], reading: HelperReading) -> list[str]:
    kind = event.get("type")
    part = event.get("part") or {}
    if kind == "text":
        return _said(reading, part.get("text"))
    if kind == "tool_use":
        state = part.get("state") or {}
        return [f"→ {part.get('tool')} {_short(state.get('input', {}))}"]
    if kind == "error":
        error = event.get("error")
        data = error.get("data") if isinstance(error, dict) else None
        message = (data or {}).get("message") if isinstance(data, dict) else None
        reading.failed = str(message or (error.get("name") if isinstance(error, dict) else error))
        return [f"✗ {reading.failed}"]
    return []


HELPERS: Final = (
    Helper(
        "claude",
        "Claude Code",
        ("-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"),
        _claude,
    ),
    Helper("codex", "Codex", ("exec", "--json", "--full-auto"), _codex),
    Helper("opencode", "opencode", ("run", "--format", "json"), _opencode),
)
HELPER_NAMES: Final = tuple(helper.name for helper in HELPERS)


def find_helper(name: str) -> Helper:
    """The helper called ``name`` (KeyError for none)."""
    for helper in HELPERS:
        if helper.name == name:
            return helper
    raise KeyError(name)


def helper_list(raw: str) -> tuple[str, ...]:
    """ZCODER_HELPERS: names separated by commas or spaces, or ``none``; ValueError for
    a name zcoder does not know."""
    names = tuple(part for part in raw.replace(",", " ").lower().split() if part)
    if names in ((), ("none",), ("off",)):
        return ()
    unknown = [name for name in names if name not in HELPER_NAMES]
    if unknown:
        raise ValueError(
            f"unknown helper {unknown[0]!r}: the helpers are {', '.join(HELPER_NAMES)} (or none)"
        )
    return tuple(dict.fromkeys(names))


def helper_setting(raw: str, row: _Named) -> tuple[str, ...]:
    """The option table's parser of ZCODER_HELPERS (zcoder.options)."""
    try:
        return helper_list(raw)
    except ValueError as exc:
        raise ConfigError(f"{row.env}: {exc}") from None


def installed(enabled: Iterable[str] = HELPER_NAMES) -> dict[str, str]:
    """The helpers of ``enabled`` whose program is on PATH: name → its path."""
    found = {}
    for name in enabled:
        path = shutil.which(name)
        if path is not None:
            found[name] = path
    return found


def version(path: str) -> str:
    """What ``PATH --version`` says first ("" when it says nothing in time). Blocks."""
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            timeout=VERSION_SECONDS,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    out = done.stdout.decode("utf-8", "replace").strip().splitlines()
    return out[0][:80] if out and done.returncode == 0 else ""
