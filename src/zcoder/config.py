"""Settings from command-line flags and the environment, validated once.

The options are the rows of zcoder.options (flag, variable, parser, default, help).
Flags win over the environment. A bad core setting is a usage error (exit 2) with a
message naming it; a bad relay setting only turns the relay off (see zcoder.relay.settings).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zcoder.model import (
    BACKENDS,
    DEFAULT_BASE_URL,
    DEFAULT_HOST,
    normalize_base_url,
    normalize_host,
)
from zcoder.model.context import ContextWindow, explicit_window
from zcoder.model.limits import (
    DEFAULT_IDLE_SECONDS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_MAX_REPLY_CHARS,
)
from zcoder.options import (
    DEFAULT_STDIN_WAIT,
    ConfigError,
    McpLimits,
    default_of,
    option,
    parsed_settings,
)
from zcoder.relay import BadName, RelaySettings, check_name, default_name, load_relay_settings
from zcoder.sessions import default_home
from zcoder.tools import CommandPolicy, EditPolicy, Mode, Profile, parse_mode
from zcoder.tools.web.rules import WebRules

__all__ = ["DEFAULT_COMPACT_AT", "Config", "ConfigError", "load_config"]

DEFAULT_COMPACT_AT: Final[float] = default_of("compact_at")
"""Compact the history before a request that would fill this share of the window."""


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
    mode: Mode = Mode.ASK
    """--mode: the permission mode zcoder starts in (zcoder.tools.modes)."""
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
    """ZCODER_STDIN_WAIT: how long --prompt waits for piped input (zcoder.oneshot.input)."""
    gguf: Path | None = None
    """--gguf / ZCODER_GGUF: the model file the embedded server runs (the ``openai`` backend
    then points at that server); set once it has started."""
    server_places: int = 1
    """Requests the configured server runs at once (zcoder.model.turn_queue)."""
    mcp_start_timeout: float = default_of("mcp_start_timeout")
    """ZCODER_MCP_START_TIMEOUT: seconds an MCP server may take to start (zcoder.mcp)."""
    mcp_call_timeout: float = default_of("mcp_call_timeout")
    """ZCODER_MCP_CALL_TIMEOUT: seconds one MCP tool call may take."""
    mcp_turn_wait: float = default_of("mcp_turn_wait")
    """ZCODER_MCP_TURN_WAIT: seconds a turn waits for MCP servers still starting."""
    mcp_tools_share: float = default_of("mcp_tools_share")
    """ZCODER_MCP_TOOLS_SHARE: the share of the window MCP tool schemas may take."""
    notify: str = default_of("notify")
    """ZCODER_NOTIFY: ``desktop`` (OSC 9 and 777, and the bell), ``bell`` or ``off``: how
    a turn's end or a waiting question is told while the terminal has no focus."""
    offline: bool = False
    """--offline / ZCODER_OFFLINE: the model gets no web tool (fetch_url)."""
    web_allow: tuple[str, ...] = ()
    """ZCODER_WEB_ALLOW, ZCODER_WEB_DENY, ZCODER_WEB_MAX_BYTES, ZCODER_WEB_TIMEOUT:
    fetch_url's rules (``web_rules``; zcoder.tools.web.rules)."""
    web_deny: tuple[str, ...] = ()
    web_max_bytes: int = default_of("web_max_bytes")
    web_timeout: float = default_of("web_timeout")
    vision: bool | None = None
    """ZCODER_VISION: send images whatever the server says (True), never (False), or as
    the server says the model takes them (None: zcoder.agent.image_book)."""
    image_max_bytes: int = default_of("image_max_bytes")
    """ZCODER_IMAGE_MAX_BYTES: the largest image a prompt attaches."""
    helpers: tuple[str, ...] = default_of("helpers")
    """ZCODER_HELPERS, ZCODER_HELPER_TIMEOUT: the other coding agents zcoder may hand a
    task to, when installed, and how long one may run (zcoder.tools.helpers)."""
    helper_timeout: float = default_of("helper_timeout")
    subagents: int | None = None
    """ZCODER_SUBAGENTS: how many subagents run at once; None (auto): the server's slots,
    else 1; 0 (off): no task tool."""

    @property
    def web_rules(self) -> WebRules:
        return WebRules(self.web_allow, self.web_deny, self.web_max_bytes, self.web_timeout)

    @property
    def mcp_limits(self) -> McpLimits:
        return McpLimits(
            self.mcp_start_timeout, self.mcp_call_timeout, self.mcp_turn_wait, self.mcp_tools_share
        )


def _env(env: Mapping[str, str], name: str) -> str | None:
    """The environment's value for the option ``name`` (its row's variable)."""
    variable = option(name).env
    assert variable is not None, name
    return env.get(variable)


def _backend(env: Mapping[str, str], backend: str | None, base_url: str | None) -> tuple[str, str]:
    """The backend and base URL: a base URL given without a backend means ``openai``."""
    raw_url = base_url or _env(env, "base_url") or ""
    raw = backend or _env(env, "backend") or ("openai" if raw_url.strip() else "ollama")
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
    mode: str | None = None,
    offline: bool = False,
) -> Config:
    """Resolve every setting; raises ConfigError for one that cannot be used.

    The keywords are the flags (zcoder.options.config_flags); each wins over its
    environment variable. The rows that stand alone are read by the table
    (zcoder.options.parsed_settings); those weighed against each other are read here."""
    raw_workspace = workspace or _env(env, "workspace") or os.getcwd()
    path = Path(raw_workspace).expanduser()
    if not path.is_dir():
        raise ConfigError(f"workspace {raw_workspace} is not a directory")
    canonical = path.resolve()

    raw_profile = (profile or _env(env, "profile") or option("profile").default).strip().lower()
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
        raw_policy = _env(env, "command_policy") or option("command_policy").default
        raw_policy = raw_policy.strip().lower()
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

    try:
        chosen_mode = parse_mode(mode or _env(env, "mode") or default_of("mode"))
    except ValueError as exc:
        raise ConfigError(f"{'--mode' if mode else 'ZCODER_MODE'}: {exc}") from None

    chosen_backend, chosen_base_url = _backend(env, backend, base_url)
    raw_host = host or _env(env, "host") or DEFAULT_HOST
    try:
        chosen_host = normalize_host(raw_host)
    except ValueError as exc:
        raise ConfigError(f"Ollama host {raw_host!r} is not usable: {exc}") from None

    chosen_model = (
        model if model is not None else _env(env, "model") or default_of("model")
    ).strip()
    if not chosen_model:
        raise ConfigError("the model name is empty; pass -m NAME or set ZCODER_MODEL")

    try:
        window = explicit_window(context_window, env)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    settings = dict(parsed_settings(env))
    if no_think:
        settings["think"] = False
    if offline:
        settings["offline"] = True

    raw_name = name if name is not None else _env(env, "name") or ""
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
        relay=load_relay_settings(env),
        no_color=_env(env, "no_color") is not None,
        context_window=window,
        backend=chosen_backend,
        base_url=chosen_base_url,
        agent_name=agent_name,
        mode=chosen_mode,
        **settings,
    )
