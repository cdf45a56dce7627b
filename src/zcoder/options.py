"""Every option of ``zcoder`` in one table: its flags, environment variable, settings.json
key, parser, default and help.

One row per option (``OPTIONS``). From it come the command line (``build_arguments``
adds the rows' flags to argparse, in the table's order, which is the order ``--help``
lists them in), the settings ``zcoder.config.load_config`` reads from the environment
(``Option.read``), the flags an editor's sessions are made with (``editor_flags``, for
``--acp``) and the flags ``--connect`` and ``--acp`` refuse (``refused``).

Precedence, for every row that has more than one source: the flag, then the environment
variable, then settings.json (only the context window has a key there, read per model by
``zcoder.model.context``), then the default. An environment value that is empty or only
spaces counts as unset.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from zcoder import __version__
from zcoder.base.errors import ConfigError
from zcoder.base.images import DEFAULT_IMAGE_MAX_BYTES
from zcoder.model.context import WINDOW_SETTING
from zcoder.model.limits import (
    DEFAULT_IDLE_SECONDS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_MAX_REPLY_CHARS,
    IDLE_SETTING,
    MAX_LINE_SETTING,
    MAX_REPLY_BYTES_SETTING,
    MAX_REPLY_SETTING,
)
from zcoder.option_values import (
    compact_at,
    edit_policy,
    host_list,
    keep_alive,
    lenient_seconds,
    lenient_share,
    notify_mode,
    on_off,
    positive_int,
    positive_seconds,
    stripped,
    subagent_count,
)
from zcoder.tools import EditPolicy
from zcoder.tools.helpers.clis import DEFAULT_HELPER_TIMEOUT, HELPER_NAMES, helper_setting
from zcoder.tools.output import DEFAULT_MAX_TOOL_OUTPUT, MAX_TOOL_OUTPUT_ENV
from zcoder.tools.web.rules import DEFAULT_WEB_MAX_BYTES, DEFAULT_WEB_TIMEOUT

__all__ = [
    "DEFAULT_STDIN_WAIT",
    "OPTIONS",
    "STDIN_WAIT_SETTING",
    "ConfigError",
    "McpLimits",
    "Option",
    "build_arguments",
    "config_flags",
    "default_of",
    "editor_flags",
    "option",
    "refusal",
    "refused",
]

STDIN_WAIT_SETTING: Final = "ZCODER_STDIN_WAIT"
DEFAULT_STDIN_WAIT: Final = 5.0
"""Seconds standard input may send nothing before zcoder goes on without (more of) it."""


Parser = Callable[[str, "Option"], Any]
"""An environment value (not blank) and its row → the setting; ConfigError if unusable."""


@dataclass(frozen=True)
class Option:
    """One option. ``name`` is its ``Config`` field, ``load_config`` keyword and argparse
    ``dest`` (a row whose flags store elsewhere says so in ``arg["dest"]``)."""

    name: str
    flags: tuple[str, ...] = ()
    env: str | None = None
    setting: str | None = None
    """Its key in ``$ZCODER_HOME/settings.json``, if it has one."""
    parse: Parser | None = None
    """How ``read`` turns the environment variable into the setting; None: read elsewhere
    (``load_config`` weighs it against other options, or it is not a setting)."""
    default: Any = None
    help: str | None = None
    arg: Mapping[str, Any] = field(default_factory=dict)
    """argparse's other keywords for the flags (metavar, choices, action...)."""
    group: str | None = None
    """Flags of one group exclude each other."""
    editor: Literal["forward", "refuse"] | None = None
    """``--acp``: the flag is given to every session's settings, or refused."""
    remote: bool = False
    """``--connect`` refuses the flag: the agent's settings are the remote zcoder's."""
    named: str = ""
    """How an error names the flag, when not by all its flags (``-m/--model``)."""
    alias: str | None = None
    """A second environment variable for the same setting (what zcoder.zsh users type)."""

    @property
    def label(self) -> str:
        return self.named or "/".join(self.flags)

    def read(self, env: Mapping[str, str]) -> Any:
        """The environment's value through ``parse``; the default when unset or blank."""
        assert self.env is not None and self.parse is not None, self.name
        raw = env.get(self.env)
        if self.alias is not None and (env.get(self.alias) or "").strip():
            other = self.parse(env[self.alias], replace(self, env=self.alias))
            if raw is not None and raw.strip() and self.parse(raw, self) != other:
                raise ConfigError(
                    f"{self.env}={raw.strip()} and {self.alias}={env[self.alias].strip()} "
                    f"disagree; they name one setting: set one of them"
                )
            return other
        if raw is None or not raw.strip():
            return self.default
        return self.parse(raw, self)


# -- the parsers, each with the message a bad value gets ----------------------------------


# -- the table ----------------------------------------------------------------------------

OPTIONS: Final[tuple[Option, ...]] = (
    # The flags, in the order --help lists them.
    Option(
        "model", ("-m", "--model"), "ZCODER_MODEL", default="qwen3-coder",
        help="the model (default $ZCODER_MODEL or qwen3-coder)",
        editor="forward", remote=True,
    ),
    Option(
        "host", ("--host",), "OLLAMA_HOST",
        help="Ollama endpoint (default $OLLAMA_HOST or http://127.0.0.1:11434)",
        editor="forward", remote=True,
    ),
    Option(
        "backend", ("--backend",), "ZCODER_BACKEND", arg={"metavar": "ollama|openai"},
        help="the model server's API: ollama (default $ZCODER_BACKEND or ollama), or openai "
        "for llama.cpp's llama-server, LM Studio or vLLM",
        editor="forward", remote=True,
    ),
    Option(
        "base_url", ("--base-url",), "ZCODER_BASE_URL", arg={"metavar": "URL"},
        help="the OpenAI-compatible server (default $ZCODER_BASE_URL or "
        "http://127.0.0.1:8080/v1; implies --backend openai); its key: $ZCODER_API_KEY",
        editor="forward", remote=True,
    ),
    Option(
        "gguf", ("--gguf",), "ZCODER_GGUF",  # model.embedded.gguf_from reads it
        arg={"metavar": "FILE"},
        help="run this GGUF model file in zcoder's own llama.cpp server (default "
        "$ZCODER_GGUF; needs pip install 'zcoder[local]'; see docs/models.md)",
        remote=True,
    ),
    Option(
        "workspace", ("-w", "--workspace"), "ZCODER_WORKSPACE",
        help="the only directory file tools may touch (default: here)",
        editor="refuse", remote=True,
    ),
    Option(
        "profile", ("--profile",), "ZCODER_PROFILE", default="coding",
        arg={"choices": ["coding", "sysadmin"]}, help="default coding",
        editor="forward", remote=True,
    ),
    Option(
        "mode", ("--mode",), "ZCODER_MODE", default="ask",
        arg={"metavar": "MODE"},  # parse_mode: as /mode takes it ("accept edits", Plan)
        help="the permission mode to start in (Shift+Tab and /mode switch it): ask "
        "(default $ZCODER_MODE or ask), accept-edits or plan (read-only)",
        editor="forward", remote=True,
    ),
    Option(
        "prompt", ("-p", "--prompt"), arg={"metavar": "TEXT"},
        help="run one turn and exit; piped standard input goes after TEXT, and - reads "
        "the prompt itself from standard input",
        editor="refuse", remote=True, named="--prompt",
    ),
    Option(
        "output_format", ("--output-format",), group="output",
        arg={"choices": ["text", "json"], "default": None},
        help="with --prompt: text (default) streams the answer; json prints one JSON "
        "object (reply, tool calls, usage, exit status) and nothing else on stdout",
        editor="refuse", remote=True,
    ),
    Option(
        "json", ("--json",), group="output",
        arg={"dest": "output_format", "action": "store_const", "const": "json"},
        help="the same as --output-format json",
    ),
    Option(
        "yes", ("--yes",), group="policy", arg={"action": "store_true"},
        help="run commands without asking (coding profile only)",
        editor="forward", remote=True,
    ),
    Option(
        "deny_commands", ("--deny-commands",), group="policy", arg={"action": "store_true"},
        help="refuse every command without asking",
        editor="forward", remote=True,
    ),
    Option(
        "resume", ("--resume",), arg={"metavar": "ID"}, group="session",
        help="open a saved session of this workspace (its id, or a unique prefix of it: "
        "/sessions lists them)",
        editor="refuse",
    ),
    Option(
        "fork", ("--fork",), arg={"metavar": "ID"}, group="session",
        help="start a new session from a copy of a saved one's history (the saved one stays "
        "as it is; as /fork)",
        editor="refuse",
    ),
    Option(
        "name", ("--name",), "ZCODER_AGENT_NAME", arg={"metavar": "NAME"},
        help="this instance's name for other agents (default $ZCODER_AGENT_NAME, else the"
        " project's directory name)",
        editor="forward", remote=True,
    ),
    Option(
        "no_think", ("--no-think",), arg={"action": "store_true"},
        help='send "think": false',
        editor="forward", remote=True,
    ),
    Option(
        "context_window", ("--context-window",), "ZCODER_CONTEXT_WINDOW", WINDOW_SETTING,
        arg={"metavar": "N"},
        help="context window in tokens, sent as num_ctx, or auto (default: "
        "$ZCODER_CONTEXT_WINDOW, settings.json, else sized from what the server reports; "
        "see docs/models.md)",
        editor="forward", remote=True,
    ),
    Option(
        "acp", ("--acp",), arg={"action": "store_true"},
        help="speak the Agent Client Protocol on standard input and output, for an editor "
        "or a script (docs/editors.md); each session's workspace is the client's cwd",
        remote=True,
    ),
    Option(
        "connect", ("--connect",), arg={"metavar": "[USER@]HOST[:PORT][/PATH]"},
        help="this TUI, the agent on another machine: ssh runs zcoder --acp there "
        "(docs/remote.md); --resume ID loads a session saved there",
    ),
    Option(
        "offline", ("--offline",), "ZCODER_OFFLINE", parse=on_off, default=False,
        arg={"action": "store_true"},
        help="no web access for the model: fetch_url is not offered (default $ZCODER_OFFLINE)",
        editor="forward", remote=True,
    ),
    Option(
        "print_instructions", ("--print-instructions",), arg={"action": "store_true"},
        help="print the resolved AGENTS.md chain and exit",
    ),
    Option(
        "version", ("-V", "--version"),
        arg={"action": "version", "version": f"zcoder {__version__}"},
    ),
    # The settings with no flag (and those a flag sets in another form, --no-think and
    # --yes/--deny-commands), in the order load_config checks them.
    Option("home", env="ZCODER_HOME"),  # read by zcoder.sessions.default_home
    Option("command_policy", env="ZCODER_COMMAND_POLICY", default="ask"),
    Option("keep_alive", env="ZCODER_KEEP_ALIVE", parse=keep_alive),
    Option("think", env="ZCODER_THINK", parse=on_off),
    Option(
        "max_tool_output", env=MAX_TOOL_OUTPUT_ENV, parse=positive_int,
        default=DEFAULT_MAX_TOOL_OUTPUT,
    ),
    Option("max_output_tokens", env="ZCODER_MAX_OUTPUT_TOKENS", parse=positive_int, default=8192),
    Option("api_key", env="ZCODER_API_KEY", parse=stripped),
    Option(
        "compact_at", env="ZCODER_COMPACT_AT", parse=compact_at, default=0.85,
        alias="ZCODER_COMPACT_PERCENT",
    ),
    Option("edit_policy", env="ZCODER_EDITS", parse=edit_policy, default=EditPolicy.AUTO),
    Option(
        "relay_edit_policy", env="ZCODER_RELAY_EDITS", parse=edit_policy,
        default=EditPolicy.ASK,
    ),
    Option("idle_timeout", env=IDLE_SETTING, parse=positive_seconds, default=DEFAULT_IDLE_SECONDS),
    Option(
        "max_reply_chars", env=MAX_REPLY_SETTING, parse=positive_int,
        default=DEFAULT_MAX_REPLY_CHARS,
    ),
    Option(
        "max_line_bytes", env=MAX_LINE_SETTING, parse=positive_int,
        default=DEFAULT_MAX_LINE_BYTES,
    ),
    Option(
        "max_reply_bytes", env=MAX_REPLY_BYTES_SETTING, parse=positive_int,
        default=DEFAULT_MAX_REPLY_BYTES,
    ),
    Option(
        "stdin_wait", env=STDIN_WAIT_SETTING, parse=positive_seconds, default=DEFAULT_STDIN_WAIT
    ),
    Option("no_color", env="NO_COLOR"),
    Option(
        "mcp_start_timeout", env="ZCODER_MCP_START_TIMEOUT", parse=lenient_seconds,
        default=30.0,
    ),
    Option(
        "mcp_call_timeout", env="ZCODER_MCP_CALL_TIMEOUT", parse=lenient_seconds,
        default=120.0,
    ),
    Option("mcp_turn_wait", env="ZCODER_MCP_TURN_WAIT", parse=lenient_seconds, default=10.0),
    Option("mcp_tools_share", env="ZCODER_MCP_TOOLS_SHARE", parse=lenient_share, default=0.10),
    Option("notify", env="ZCODER_NOTIFY", parse=notify_mode, default="desktop"),
    Option("web_allow", env="ZCODER_WEB_ALLOW", parse=host_list, default=()),
    Option("web_deny", env="ZCODER_WEB_DENY", parse=host_list, default=()),
    Option(
        "web_max_bytes", env="ZCODER_WEB_MAX_BYTES", parse=positive_int,
        default=DEFAULT_WEB_MAX_BYTES,
    ),
    Option(
        "web_timeout", env="ZCODER_WEB_TIMEOUT", parse=positive_seconds,
        default=DEFAULT_WEB_TIMEOUT,
    ),
    Option("vision", env="ZCODER_VISION", parse=on_off),
    Option(
        "image_max_bytes", env="ZCODER_IMAGE_MAX_BYTES", parse=positive_int,
        default=DEFAULT_IMAGE_MAX_BYTES,
    ),
    Option("helpers", env="ZCODER_HELPERS", parse=helper_setting, default=HELPER_NAMES),
    Option(
        "helper_timeout", env="ZCODER_HELPER_TIMEOUT", parse=positive_seconds,
        default=DEFAULT_HELPER_TIMEOUT,
    ),
    Option("subagents", env="ZCODER_SUBAGENTS", parse=subagent_count, default=None),
)  # fmt: skip

_BY_NAME: Final = {row.name: row for row in OPTIONS}


def option(name: str) -> Option:
    """The row named ``name`` (KeyError for none: a typo in the code, not the user's)."""
    return _BY_NAME[name]


def default_of(name: str) -> Any:
    """The default of the row ``name``: what Config and McpLimits start from."""
    return _BY_NAME[name].default


def parsed_settings(env: Mapping[str, str]) -> Iterator[tuple[str, Any]]:
    """(name, value) of every row ``read`` resolves on its own; ConfigError if bad."""
    for row in OPTIONS:
        if row.parse is not None:
            yield row.name, row.read(env)


@dataclass(frozen=True)
class McpLimits:
    """The MCP client's deadlines in seconds and the share of the window its tool schemas
    may take (zcoder.mcp.manager, zcoder.mcp.catalog): ``Config.mcp_limits``."""

    start_timeout: float = default_of("mcp_start_timeout")
    call_timeout: float = default_of("mcp_call_timeout")
    turn_wait: float = default_of("mcp_turn_wait")
    tools_share: float = default_of("mcp_tools_share")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> McpLimits:
        """The rows' values (``zcoder mcp test`` reads them without a Config)."""
        return cls(*(option(f"mcp_{name}").read(env) for name in _MCP_ROWS))


_MCP_ROWS: Final = ("start_timeout", "call_timeout", "turn_wait", "tools_share")


def build_arguments(parser: argparse.ArgumentParser) -> None:
    """Add every row's flags to ``parser``, in the table's order."""
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for row in OPTIONS:
        if not row.flags:
            continue
        target: Any = parser
        if row.group is not None:
            target = groups.get(row.group) or parser.add_mutually_exclusive_group()
            groups[row.group] = target
        keywords = dict(row.arg)
        if row.help is not None:
            keywords["help"] = row.help
        target.add_argument(*row.flags, **keywords)


def editor_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The flags every session of ``--acp`` is made with (the rows it forwards)."""
    return {row.name: getattr(args, row.name) for row in OPTIONS if row.editor == "forward"}


_WHY_REFUSED: Final = {
    "acp": " (the client opens sessions, each in its own cwd)",
    "connect": ": the agent is the remote zcoder's (give it in ZCODER_REMOTE_COMMAND, or the "
    "path in the target)",
}


def refused(args: argparse.Namespace, mode: Literal["acp", "connect"]) -> str | None:
    """The first flag (as ``--help`` lists them) given that ``mode`` refuses, if any."""
    for row in OPTIONS:
        refuses = row.remote if mode == "connect" else row.editor == "refuse"
        if refuses and getattr(args, row.name) not in (None, False):
            return row.label
    return None


def refusal(args: argparse.Namespace, mode: Literal["acp", "connect"]) -> str | None:
    """What to say when a flag given does not go with ``--acp`` or ``--connect``."""
    flag = refused(args, mode)
    return None if flag is None else f"{flag} does not go with --{mode}{_WHY_REFUSED[mode]}"


def config_flags(args: argparse.Namespace) -> dict[str, Any]:
    """``load_config``'s keywords from the parsed flags: the editor's, and the workspace."""
    return {**editor_flags(args), "workspace": args.workspace}
