"""Settings from command-line flags and the environment, validated once.

Flags win over the environment. A bad core setting is a usage error (exit 2) with a
message naming it; a bad relay setting only turns the relay off (see zcoder.relay.settings).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from zcoder.model import (
    BACKENDS,
    DEFAULT_BASE_URL,
    DEFAULT_HOST,
    normalize_base_url,
    normalize_host,
)
from zcoder.model.body import (
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_REPLY_BYTES,
    MAX_LINE_SETTING,
    MAX_REPLY_BYTES_SETTING,
)
from zcoder.model.context import ContextWindow, explicit_window, parse_keep_alive
from zcoder.model.watch import (
    DEFAULT_IDLE_SECONDS,
    DEFAULT_MAX_REPLY_CHARS,
    IDLE_SETTING,
    MAX_REPLY_SETTING,
)
from zcoder.oneshot_input import DEFAULT_STDIN_WAIT, STDIN_WAIT_SETTING
from zcoder.relay import BadName, RelaySettings, check_name, default_name, load_relay_settings
from zcoder.sessions import default_home
from zcoder.tools import CommandPolicy, EditPolicy, Profile

DEFAULT_MODEL = "qwen3-coder"
DEFAULT_MAX_TOOL_OUTPUT = 32768
DEFAULT_MAX_OUTPUT_TOKENS = 8192
DEFAULT_COMPACT_AT = 0.85
"""Compact the history before a request that would fill this share of the window."""


class ConfigError(ValueError):
    """A setting that cannot be used; the message names it and says what is accepted."""


@dataclass(frozen=True)
class Config:
    model: str
    host: str
    workspace: Path
    profile: Profile
    home: Path
    command_policy: CommandPolicy
    think: bool | None
    max_tool_output: int
    max_output_tokens: int
    relay: RelaySettings
    no_color: bool
    context_window: ContextWindow | None = None
    """--context-window or ZCODER_CONTEXT_WINDOW; None lets zcoder.model.context choose."""
    keep_alive: str | int | None = None
    """ZCODER_KEEP_ALIVE, sent as Ollama's keep_alive; None leaves Ollama's default (5m)."""
    backend: str = "ollama"
    """``ollama``, or ``openai`` for an OpenAI-compatible server at ``base_url``."""
    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False, compare=False)
    """ZCODER_API_KEY, sent only as the Authorization header; never shown or stored."""
    compact_at: float | None = DEFAULT_COMPACT_AT
    """ZCODER_COMPACT_AT: the share of the window that triggers compaction; None: off."""
    edit_policy: EditPolicy = EditPolicy.AUTO
    """ZCODER_EDITS: ``auto`` writes at once (undo with /undo); ``ask`` asks before each."""
    relay_edit_policy: EditPolicy = EditPolicy.ASK
    """ZCODER_RELAY_EDITS: ``ask`` (the default): a relayed task asks before each edit
    unless its sender is trusted (/agents trust); ``auto``: relayed edits follow
    ZCODER_EDITS, as the user's own do."""
    agent_name: str = ""
    """--name / ZCODER_AGENT_NAME: this instance's name for its peers (default: project)."""
    idle_timeout: float = DEFAULT_IDLE_SECONDS
    """ZCODER_IDLE_TIMEOUT: seconds without new output (keep-alives do not count) before a
    reply is stopped (zcoder.model.watch)."""
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS
    """ZCODER_MAX_REPLY_CHARS: the characters of one reply after which it is stopped."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """ZCODER_MAX_LINE_BYTES: the longest line of a streamed reply (zcoder.model.body)."""
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    """ZCODER_MAX_REPLY_BYTES: the most bytes one reply's body may bring."""
    stdin_wait: float = DEFAULT_STDIN_WAIT
    gguf: Path | None = None
    """--gguf / ZCODER_GGUF: the model file the embedded server runs (the ``openai`` backend
    then points at that server); set once it has started."""
    """ZCODER_STDIN_WAIT: how long --prompt waits for piped input (zcoder.oneshot_input)."""


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) <= 0:
        raise ConfigError(f"{name} must be a positive whole number (got {raw!r})")
    return int(raw)


def _positive_seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (value > 0 and value < float("inf")):
        raise ConfigError(f"{name} must be a positive number of seconds (got {raw!r})")
    return value


def _compact_at(raw: str | None) -> float | None:
    """ZCODER_COMPACT_AT: a percentage from 50 to 99 (``85`` or ``85%``), or ``off``."""
    if raw is None or not raw.strip():
        return DEFAULT_COMPACT_AT
    value = raw.strip().lower().removesuffix("%")
    if value in ("off", "no", "never", "0"):
        return None
    if value.isdigit() and 50 <= int(value) <= 99:
        return int(value) / 100
    raise ConfigError(
        f"ZCODER_COMPACT_AT must be a percentage from 50 to 99, or off (got {raw.strip()!r})"
    )


def _edit_policy(
    env: Mapping[str, str], name: str = "ZCODER_EDITS", default: EditPolicy = EditPolicy.AUTO
) -> EditPolicy:
    """ZCODER_EDITS (auto by default) or ZCODER_RELAY_EDITS (ask by default): auto or ask."""
    raw = env.get(name)
    value = (raw or "").strip().lower() or default.value
    try:
        return EditPolicy(value)
    except ValueError:
        raise ConfigError(f"{name} must be auto or ask (got {raw!r})") from None


def _think(raw: str | None) -> bool | None:
    if raw is None or raw.strip() == "":
        return None
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"ZCODER_THINK must be on or off (got {raw!r})")


def _backend(env: Mapping[str, str], backend: str | None, base_url: str | None) -> tuple[str, str]:
    """The backend and base URL: a base URL given without a backend means ``openai``."""
    raw_url = base_url or env.get("ZCODER_BASE_URL") or ""
    raw = backend or env.get("ZCODER_BACKEND") or ("openai" if raw_url.strip() else "ollama")
    chosen = raw.strip().lower()
    if chosen not in BACKENDS:
        raise ConfigError(f"the backend must be ollama or openai (got {raw!r})")
    try:
        return chosen, normalize_base_url(raw_url)
    except ValueError as exc:
        raise ConfigError(f"--base-url (ZCODER_BASE_URL) is not usable: {exc}") from None


def load_config(
    env: Mapping[str, str],
    *,
    model: str | None = None,
    host: str | None = None,
    workspace: str | None = None,
    profile: str | None = None,
    yes: bool = False,
    deny_commands: bool = False,
    no_think: bool = False,
    context_window: str | None = None,
    backend: str | None = None,
    base_url: str | None = None,
    name: str | None = None,
) -> Config:
    """Resolve every setting; raises ConfigError for one that cannot be used."""
    raw_workspace = workspace or env.get("ZCODER_WORKSPACE") or os.getcwd()
    path = Path(raw_workspace).expanduser()
    if not path.is_dir():
        raise ConfigError(f"workspace {raw_workspace} is not a directory")
    canonical = path.resolve()

    raw_profile = (profile or env.get("ZCODER_PROFILE") or "coding").strip().lower()
    try:
        chosen_profile = Profile(raw_profile)
    except ValueError:
        raise ConfigError(f"profile must be coding or sysadmin (got {raw_profile!r})") from None

    if yes and deny_commands:
        raise ConfigError("--yes and --deny-commands cannot be used together")
    if yes:
        policy = CommandPolicy.ALLOW
    elif deny_commands:
        policy = CommandPolicy.DENY
    else:
        raw_policy = (env.get("ZCODER_COMMAND_POLICY") or "ask").strip().lower()
        try:
            policy = CommandPolicy(raw_policy)
        except ValueError:
            raise ConfigError(
                f"ZCODER_COMMAND_POLICY must be ask, allow or deny (got {raw_policy!r})"
            ) from None
    if policy is CommandPolicy.ALLOW and chosen_profile is Profile.SYSADMIN:
        raise ConfigError(
            "--yes (or ZCODER_COMMAND_POLICY=allow) cannot be used with the sysadmin profile: "
            "every command must be approved there"
        )

    chosen_backend, chosen_base_url = _backend(env, backend, base_url)
    raw_host = host or env.get("OLLAMA_HOST") or DEFAULT_HOST
    try:
        chosen_host = normalize_host(raw_host)
    except ValueError as exc:
        raise ConfigError(f"Ollama host {raw_host!r} is not usable: {exc}") from None

    chosen_model = (
        model if model is not None else env.get("ZCODER_MODEL") or DEFAULT_MODEL
    ).strip()
    if not chosen_model:
        raise ConfigError("the model name is empty; pass -m NAME or set ZCODER_MODEL")

    try:
        window = explicit_window(context_window, env)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    raw_keep_alive = env.get("ZCODER_KEEP_ALIVE", "").strip()
    try:
        keep_alive = parse_keep_alive(raw_keep_alive) if raw_keep_alive else None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None

    raw_name = name if name is not None else env.get("ZCODER_AGENT_NAME", "")
    try:
        agent_name = (
            check_name(raw_name) if raw_name.strip() else default_name(canonical.name or "zcoder")
        )
    except BadName as exc:
        source = "--name" if name is not None else "ZCODER_AGENT_NAME"
        raise ConfigError(f"{source}: {exc}") from None

    return Config(
        model=chosen_model,
        host=chosen_host,
        workspace=canonical,
        profile=chosen_profile,
        home=default_home(env),
        command_policy=policy,
        think=False if no_think else _think(env.get("ZCODER_THINK")),
        max_tool_output=_positive_int(env, "ZCODER_MAX_TOOL_OUTPUT", DEFAULT_MAX_TOOL_OUTPUT),
        max_output_tokens=_positive_int(env, "ZCODER_MAX_OUTPUT_TOKENS", DEFAULT_MAX_OUTPUT_TOKENS),
        relay=load_relay_settings(env),
        no_color="NO_COLOR" in env,
        context_window=window,
        keep_alive=keep_alive,
        backend=chosen_backend,
        base_url=chosen_base_url,
        api_key=env.get("ZCODER_API_KEY", "").strip() or None,
        compact_at=_compact_at(env.get("ZCODER_COMPACT_AT")),
        edit_policy=_edit_policy(env),
        relay_edit_policy=_edit_policy(env, "ZCODER_RELAY_EDITS", EditPolicy.ASK),
        agent_name=agent_name,
        idle_timeout=_positive_seconds(env, IDLE_SETTING, DEFAULT_IDLE_SECONDS),
        max_reply_chars=_positive_int(env, MAX_REPLY_SETTING, DEFAULT_MAX_REPLY_CHARS),
        max_line_bytes=_positive_int(env, MAX_LINE_SETTING, DEFAULT_MAX_LINE_BYTES),
        max_reply_bytes=_positive_int(env, MAX_REPLY_BYTES_SETTING, DEFAULT_MAX_REPLY_BYTES),
        stdin_wait=_positive_seconds(env, STDIN_WAIT_SETTING, DEFAULT_STDIN_WAIT),
    )
