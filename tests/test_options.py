"""The option table (zcoder.options): every row reaches Config with the documented
precedence (flag, then variable, then default), a bad value gets the message it always
got, and --help, --acp, --connect and docs/usage.md all follow the table."""

from __future__ import annotations

import argparse
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.model.test_context_window import Probe
from tests.test_import_tree import import_graph
from zcoder.cli import build_parser, main
from zcoder.config import ConfigError, load_config
from zcoder.model.context import resolve_for_model
from zcoder.options import OPTIONS, McpLimits, Option, editor_flags, option, refused
from zcoder.tools import CommandPolicy, EditPolicy, Mode, Profile

ROOT = Path(__file__).resolve().parent.parent
READ = [row for row in OPTIONS if row.parse is not None]
"""The rows the table reads on its own (Option.read)."""
KEYWORDS = [
    name
    for name, parameter in inspect.signature(load_config).parameters.items()
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY
]


@pytest.fixture
def base(tmp_path: Path) -> dict[str, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    return {"ZCODER_WORKSPACE": str(ws), "ZCODER_HOME": str(tmp_path / "home")}


# -- the variables the table reads: value, default, and the message of a bad one ---------

GOOD: dict[str, tuple[str, Any]] = {
    "keep_alive": ("30m", "30m"),
    "think": (" On ", True),
    "max_tool_output": ("1000", 1000),
    "max_output_tokens": ("2048", 2048),
    "api_key": (" sk-key ", "sk-key"),
    "compact_at": ("70%", 0.70),
    "edit_policy": ("ASK", EditPolicy.ASK),
    "relay_edit_policy": ("auto", EditPolicy.AUTO),
    "idle_timeout": ("12.5", 12.5),
    "max_reply_chars": ("5000", 5000),
    "max_line_bytes": ("4096", 4096),
    "max_reply_bytes": ("65536", 65536),
    "stdin_wait": ("0.5", 0.5),
    "mcp_start_timeout": ("5", 5.0),
    "mcp_call_timeout": ("7", 7.0),
    "mcp_turn_wait": ("3", 3.0),
    "mcp_tools_share": ("0.5", 0.5),
    "notify": (" Bell ", "bell"),
    "offline": ("1", True),
    "web_allow": ("localhost, 127.0.0.1 10.0.0.0/8", ("localhost", "127.0.0.1", "10.0.0.0/8")),
    "web_deny": ("*.example.com,*", ("*.example.com", "*")),
    "web_max_bytes": ("1000", 1000),
    "web_timeout": ("2.5", 2.5),
    "vision": ("on", True),
    "image_max_bytes": ("1048576", 1048576),
    "helpers": ("Codex, opencode", ("codex", "opencode")),
    "helper_timeout": ("60", 60.0),
    "subagents": (" Off ", 0),
}
DEFAULTS: dict[str, Any] = {
    "keep_alive": None,
    "think": None,
    "max_tool_output": 32768,
    "max_output_tokens": 8192,
    "api_key": None,
    "compact_at": 0.85,
    "edit_policy": EditPolicy.AUTO,
    "relay_edit_policy": EditPolicy.ASK,
    "idle_timeout": 300.0,
    "max_reply_chars": 200000,
    "max_line_bytes": 4194304,
    "max_reply_bytes": 67108864,
    "stdin_wait": 5.0,
    "mcp_start_timeout": 30.0,
    "mcp_call_timeout": 120.0,
    "mcp_turn_wait": 10.0,
    "mcp_tools_share": 0.10,
    "notify": "desktop",
    "offline": False,
    "web_allow": (),
    "web_deny": (),
    "web_max_bytes": 2097152,
    "web_timeout": 30.0,
    "vision": None,
    "image_max_bytes": 5242880,
    "helpers": ("claude", "codex", "opencode"),
    "helper_timeout": 900.0,
    "subagents": None,
}
# The messages as zcoder gave them before the table (copied from the old config.py).
BAD: dict[str, tuple[str, str]] = {
    "keep_alive": (
        "soon",
        "ZCODER_KEEP_ALIVE must be a duration such as 30m, 2h or 1h30m, a number of seconds, "
        "or -1 to keep the model loaded; got 'soon'",
    ),
    "think": ("maybe", "ZCODER_THINK must be on or off (got 'maybe')"),
    "max_tool_output": (
        " -5 ",
        "ZCODER_MAX_TOOL_OUTPUT must be a positive whole number (got '-5')",
    ),
    "max_output_tokens": (
        "lots",
        "ZCODER_MAX_OUTPUT_TOKENS must be a positive whole number (got 'lots')",
    ),
    "compact_at": ("40", "ZCODER_COMPACT_AT must be a percentage from 50 to 99, or off (got '40')"),
    "edit_policy": (" Sometimes", "ZCODER_EDITS must be auto or ask (got ' Sometimes')"),
    "relay_edit_policy": ("trusted", "ZCODER_RELAY_EDITS must be auto or ask (got 'trusted')"),
    "idle_timeout": ("inf", "ZCODER_IDLE_TIMEOUT must be a positive number of seconds (got 'inf')"),
    "max_reply_chars": ("0", "ZCODER_MAX_REPLY_CHARS must be a positive whole number (got '0')"),
    "max_line_bytes": ("1.5", "ZCODER_MAX_LINE_BYTES must be a positive whole number (got '1.5')"),
    "max_reply_bytes": ("x", "ZCODER_MAX_REPLY_BYTES must be a positive whole number (got 'x')"),
    "stdin_wait": ("-1", "ZCODER_STDIN_WAIT must be a positive number of seconds (got '-1')"),
    "notify": ("loud", "ZCODER_NOTIFY must be off, bell or desktop (got 'loud')"),
    "offline": ("perhaps", "ZCODER_OFFLINE must be on or off (got 'perhaps')"),
    "web_allow": ("x.org http://x/", "ZCODER_WEB_ALLOW: 'http://x/' is a URL: give its host only"),
    "web_deny": ("1.2.3.0/99", "ZCODER_WEB_DENY: '1.2.3.0/99' is not a network (like 10.0.0.0/8)"),
    "web_max_bytes": ("1e6", "ZCODER_WEB_MAX_BYTES must be a positive whole number (got '1e6')"),
    "web_timeout": ("0", "ZCODER_WEB_TIMEOUT must be a positive number of seconds (got '0')"),
    "vision": ("auto", "ZCODER_VISION must be on or off (got 'auto')"),
    "image_max_bytes": ("5M", "ZCODER_IMAGE_MAX_BYTES must be a positive whole number (got '5M')"),
    "helpers": (
        "claude agy",
        "ZCODER_HELPERS: unknown helper 'agy': the helpers are claude, codex, opencode (or none)",
    ),
    "helper_timeout": ("x", "ZCODER_HELPER_TIMEOUT must be a positive number of seconds (got 'x')"),
    "subagents": ("many", "ZCODER_SUBAGENTS must be a number, auto or off (got 'many')"),
}
LENIENT = {"api_key", "mcp_start_timeout", "mcp_call_timeout", "mcp_turn_wait", "mcp_tools_share"}
"""Rows with no bad value: anything unusable is the default (the MCP client's, as before)."""


def test_every_row_the_table_reads_has_a_case_here() -> None:
    names = {row.name for row in READ}
    assert set(GOOD) == set(DEFAULTS) == names
    assert set(BAD) == names - LENIENT


@pytest.mark.parametrize("row", READ, ids=lambda row: row.name)
def test_a_variable_reaches_config_and_blank_is_the_default(
    base: dict[str, str], row: Option
) -> None:
    assert row.env is not None
    raw, expected = GOOD[row.name]
    assert getattr(load_config({**base, row.env: raw}), row.name) == expected
    assert getattr(load_config(base), row.name) == DEFAULTS[row.name] == row.default
    assert getattr(load_config({**base, row.env: "  "}), row.name) == DEFAULTS[row.name]


@pytest.mark.parametrize("row", [r for r in READ if r.name in BAD], ids=lambda row: row.name)
def test_a_bad_variable_is_an_error_with_the_message_it_always_had(
    base: dict[str, str], row: Option
) -> None:
    assert row.env is not None
    raw, message = BAD[row.name]
    with pytest.raises(ConfigError) as raised:
        load_config({**base, row.env: raw})
    assert str(raised.value) == message


@pytest.mark.parametrize("bad", ["lots", "-1", "0", "nan"])
def test_an_unusable_mcp_value_is_the_default_silently(base: dict[str, str], bad: str) -> None:
    names = ("start_timeout", "call_timeout", "turn_wait", "tools_share")
    env = {**base, **{option(f"mcp_{name}").env or "": bad for name in names}}
    assert load_config(env).mcp_limits == McpLimits()
    assert McpLimits.from_env(env) == McpLimits()
    assert load_config({**base, "ZCODER_MCP_TOOLS_SHARE": "2"}).mcp_tools_share == 0.10


def test_config_hands_the_mcp_rows_down_as_one_value(base: dict[str, str]) -> None:
    env = {**base, **{option(name).env or "": GOOD[name][0] for name in GOOD if "mcp" in name}}
    assert load_config(env).mcp_limits == McpLimits(5.0, 7.0, 3.0, 0.5) == McpLimits.from_env(env)


def test_the_mcp_client_takes_its_limits_from_config_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zcoder.mcp.manager import McpManager

    monkeypatch.setenv("ZCODER_MCP_CALL_TIMEOUT", "1")
    monkeypatch.setenv("ZCODER_MCP_TOOLS_SHARE", "1")
    given = McpManager(tmp_path, None, limits=McpLimits(call_timeout=7.0, tools_share=0.5))
    assert (given.call_timeout, given.limits.tools_share) == (7.0, 0.5)
    alone = McpManager(tmp_path, None)
    assert (alone.call_timeout, alone.limits) == (120.0, McpLimits())


# -- the flags: each wins over its variable, which wins over the default ----------------

# name: (flag value, environment, the Config attribute, from the flag, from the
# variable, the default); the environment is the variable the flag weighs against.
FLAGS: dict[str, tuple[Any, dict[str, str], str, Any, Any, Any]] = {
    "model": ("flag-model", {"ZCODER_MODEL": "env-model"}, "model", "flag-model",
              "env-model", "qwen3-coder"),
    "host": (":9999", {"OLLAMA_HOST": "10.0.0.1:1"}, "host", "http://127.0.0.1:9999",
             "http://10.0.0.1:1", "http://127.0.0.1:11434"),
    "backend": ("ollama", {"ZCODER_BACKEND": "openai"}, "backend", "ollama", "openai",
                "ollama"),
    "base_url": ("a:1", {"ZCODER_BASE_URL": "b:2"}, "base_url", "http://a:1/v1",
                 "http://b:2/v1", "http://127.0.0.1:8080/v1"),
    "profile": ("sysadmin", {"ZCODER_PROFILE": "coding"}, "profile", Profile.SYSADMIN,
                Profile.CODING, Profile.CODING),
    "name": ("web", {"ZCODER_AGENT_NAME": "api"}, "agent_name", "web", "api", "ws"),
    "mode": ("plan", {"ZCODER_MODE": "accept edits"}, "mode", Mode.PLAN, Mode.ACCEPT_EDITS,
             Mode.ASK),
    "context_window": ("32k", {"ZCODER_CONTEXT_WINDOW": "16384"}, "context_window", 32768,
                       16384, None),
    "yes": (True, {"ZCODER_COMMAND_POLICY": "deny"}, "command_policy", CommandPolicy.ALLOW,
            CommandPolicy.DENY, CommandPolicy.ASK),
    "deny_commands": (True, {"ZCODER_COMMAND_POLICY": "allow"}, "command_policy",
                      CommandPolicy.DENY, CommandPolicy.ALLOW, CommandPolicy.ASK),
    "no_think": (True, {"ZCODER_THINK": "on"}, "think", False, True, None),
    "offline": (True, {"ZCODER_OFFLINE": "0"}, "offline", True, False, False),
}  # fmt: skip


def test_load_config_takes_the_flags_the_editor_is_given_and_the_workspace() -> None:
    assert set(KEYWORDS) == {*editor_flags(argparse.Namespace(**dict.fromkeys(KEYWORDS))),
                             "workspace"} == {*FLAGS, "workspace"}  # fmt: skip


def _value(config: Any, attribute: str) -> Any:
    value = getattr(config, attribute)
    return value.tokens if attribute == "context_window" and value is not None else value


@pytest.mark.parametrize("name", FLAGS)
def test_a_flag_wins_over_its_variable_which_wins_over_the_default(
    base: dict[str, str], name: str
) -> None:
    flag, env, attribute, from_flag, from_env, default = FLAGS[name]
    both = load_config({**base, **env}, **{name: flag})
    assert _value(both, attribute) == from_flag
    assert _value(load_config({**base, **env}), attribute) == from_env
    assert _value(load_config(base), attribute) == default
    if option(name).env is not None:
        assert list(env) == [option(name).env]


def test_mode_takes_a_mode_as_slash_mode_does_and_names_the_modes_when_wrong(
    base: dict[str, str],
) -> None:
    for typed, mode in [("accept edits", Mode.ACCEPT_EDITS), ("Plan", Mode.PLAN)]:
        args = build_parser().parse_args(["--mode", typed])  # it was refused here
        assert load_config(base, mode=args.mode).mode is mode
    with pytest.raises(ConfigError, match="--mode: unknown mode 'later'; the modes are ask"):
        load_config(base, mode=build_parser().parse_args(["--mode", "later"]).mode)


@pytest.mark.parametrize("row", [r for r in OPTIONS if r.setting], ids=lambda row: row.name)
async def test_a_settings_key_yields_to_the_variable_and_the_flag(
    base: dict[str, str], row: Option
) -> None:
    home = Path(base["ZCODER_HOME"])
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({row.setting: "24k"}), encoding="utf-8")
    assert row.env is not None and row.flags

    async def resolved(env: dict[str, str], **flags: Any) -> tuple[int, str]:
        config = load_config({**base, **env}, **flags)
        window = await resolve_for_model(
            config.model, explicit=config.context_window, home=config.home, probe=Probe()
        )
        return window.tokens, window.kind

    assert await resolved({}) == (24576, "settings")
    assert await resolved({row.env: "16384"}) == (16384, "env")
    assert await resolved({row.env: "16384"}, **{row.name: "32k"}) == (32768, "flag")


def test_the_gguf_row_names_the_variable_the_embedded_server_reads() -> None:
    from zcoder.model.embedded import GGUF_SETTING, gguf_from

    assert option("gguf").env == GGUF_SETTING
    assert gguf_from(None, {GGUF_SETTING: "/m.gguf"}) == gguf_from("/m.gguf", {})


def test_the_workspace_flag_wins_over_its_variable(base: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert load_config(base, workspace=str(other)).workspace == other.resolve()
    assert load_config(base).workspace == (tmp_path / "ws").resolve()


# -- the command line, --acp and --connect, all from the table ----------------------------

ARGUMENTS: dict[str, list[str]] = {
    "model": ["-m", "m"],
    "host": ["--host", ":1"],
    "backend": ["--backend", "ollama"],
    "base_url": ["--base-url", "a:1"],
    "gguf": ["--gguf", "x.gguf"],
    "workspace": ["-w", "."],
    "profile": ["--profile", "coding"],
    "mode": ["--mode", "plan"],
    "prompt": ["-p", "hi"],
    "output_format": ["--output-format", "json"],
    "yes": ["--yes"],
    "deny_commands": ["--deny-commands"],
    "resume": ["--resume", "abc"],
    "fork": ["--fork", "abc"],
    "name": ["--name", "web"],
    "no_think": ["--no-think"],
    "context_window": ["--context-window", "8192"],
    "acp": ["--acp"],
    "offline": ["--offline"],
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for variable in {row.env for row in OPTIONS if row.env} | {"ZCODER_REMOTE_COMMAND"}:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("ZCODER_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.parametrize("row", [r for r in OPTIONS if r.remote], ids=lambda row: row.name)
def test_connect_refuses_every_flag_of_the_agent(
    home: Path, row: Option, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--connect", "host", *ARGUMENTS[row.name]]) == 2
    assert capsys.readouterr().err == (
        f"zcoder: {row.label} does not go with --connect: the agent is the remote zcoder's "
        "(give it in ZCODER_REMOTE_COMMAND, or the path in the target)\n"
    )


@pytest.mark.parametrize(
    "row", [r for r in OPTIONS if r.editor == "refuse"], ids=lambda row: row.name
)
def test_acp_refuses_the_flags_of_one_turn_or_one_workspace(
    home: Path, row: Option, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--acp", *ARGUMENTS[row.name]]) == 2
    assert capsys.readouterr().err == (
        f"zcoder: {row.label} does not go with --acp (the client opens sessions, "
        "each in its own cwd)\n"
    )


def test_the_refusals_are_the_ones_zcoder_always_made() -> None:
    connect = [row.label for row in OPTIONS if row.remote]
    assert sorted(connect) == sorted([
        "--acp", "--prompt", "--output-format", "-m/--model", "--host", "--backend",
        "--base-url", "--gguf", "-w/--workspace", "--profile", "--yes", "--deny-commands",
        "--name", "--no-think", "--context-window", "--mode", "--offline",
    ])  # fmt: skip
    acp = [row.label for row in OPTIONS if row.editor == "refuse"]
    assert sorted(acp) == sorted(
        ["--prompt", "--output-format", "--resume", "--fork", "-w/--workspace"]
    )
    args = build_parser().parse_args(["--json", "--resume", "x"])
    assert refused(args, "connect") == "--output-format"  # --json sets the same setting
    assert refused(args, "acp") == "--output-format"


def test_help_lists_every_flag_with_its_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # one line each: the words are not wrapped
    text = build_parser().format_help()
    for row in OPTIONS:
        for flag in row.flags:
            assert re.search(rf"(^|[ ,]){re.escape(flag)}\b", text, re.M), flag
        if row.help is not None:
            assert row.help in text, row.name


def test_a_flag_row_has_help_and_a_setting_row_has_a_variable() -> None:
    for row in OPTIONS:
        assert row.flags or row.env, row.name
        assert row.help is not None or not row.flags or row.name == "version", row.name
    names = [row.name for row in OPTIONS]
    assert len(names) == len(set(names))


def test_usage_md_lists_every_flag_and_every_variable() -> None:
    text = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    flags = text[text.index("\n## Options\n") :].split("\n## ", 2)[1]
    settings = text[text.index("\n## Settings\n") :].split("\n## ", 2)[1]
    for row in OPTIONS:
        if row.flags:  # as the table writes them: `-m, --model NAME`
            written = ", ".join(row.flags)
            assert re.search(rf"`{re.escape(written)}[ `]", flags), written
        if row.env is not None:
            assert f"| `{row.env}` |" in settings, row.env
    variables = set(re.findall(r"^\| `([A-Z_]+)` \|", settings, re.M))
    aliases = {row.alias for row in OPTIONS if row.alias}
    assert variables == {row.env for row in OPTIONS if row.env} | aliases  # relay's: relay.md


def test_config_takes_the_stdin_wait_without_importing_a_front_end() -> None:
    graph = import_graph()
    for settings in ("zcoder.config", "zcoder.options"):
        front_ends = [
            m
            for m in graph[settings]
            if m.partition(".")[2].split(".")[0] in ("oneshot", "tui", "acp", "remote", "frontend")
        ]
        assert not front_ends, (settings, front_ends)
