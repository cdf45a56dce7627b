"""``$ZCODER_HOME/settings.json``: settings kept in a file, read safely.

The file is optional. Today it holds the context window, for every model or per model::

    {
      "context_window": 16384,
      "models": {"qwen3-coder": {"context_window": 32768}}
    }

It also holds the other machines the model may reach through the relay (zcoder.relay.hosts)::

    {"relay": {"hosts": ["me@build-box", "gpu-box:2222"]}}

Command-line flags and environment variables win over it. A file that cannot be read or
is not a JSON object is ignored with a warning the user sees; it never stops zcoder.
Keys zcoder does not know are left alone, so a newer file works with an older zcoder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = ["MAX_SETTINGS_BYTES", "SETTINGS_FILE", "SettingsFile", "load_settings_file"]

SETTINGS_FILE: Final = "settings.json"
MAX_SETTINGS_BYTES: Final = 1 << 20
"""A settings file larger than this is not read (it cannot be one written by hand)."""


@dataclass(frozen=True)
class SettingsFile:
    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def load_settings_file(home: Path) -> SettingsFile:
    """Read ``home/settings.json``; a missing file is empty, a bad one empty with a warning."""
    path = home / SETTINGS_FILE
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return SettingsFile(path)
    except OSError as exc:
        return _ignored(path, f"it could not be read ({exc.strerror or exc})")
    if len(raw) > MAX_SETTINGS_BYTES:
        return _ignored(path, f"it is larger than {MAX_SETTINGS_BYTES // 1024} KiB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return _ignored(path, "it is not UTF-8 text")
    except json.JSONDecodeError as exc:
        return _ignored(
            path, f"it is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        )
    if not isinstance(data, dict):
        return _ignored(path, "it must hold a JSON object ({...})")
    return SettingsFile(path, data)


def _ignored(path: Path, why: str) -> SettingsFile:
    return SettingsFile(path, {}, (f"{path} is ignored: {why}",))
