"""Settings from flags and the environment: flags win, bad values are usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcoder.config import ConfigError, load_config
from zcoder.tools import CommandPolicy, Profile


@pytest.fixture
def base(tmp_path: Path) -> dict[str, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    return {"ZCODER_WORKSPACE": str(ws), "ZCODER_HOME": str(tmp_path / "home")}


def test_defaults(base: dict[str, str], tmp_path: Path) -> None:
    config = load_config(base)
    assert config.model == "qwen3-coder"
    assert config.host == "http://127.0.0.1:11434"
    assert config.workspace == (tmp_path / "ws").resolve()
    assert config.profile is Profile.CODING
    assert config.command_policy is CommandPolicy.ASK
    assert config.think is None
    assert (config.max_tool_output, config.max_output_tokens) == (32768, 8192)
    assert config.home == tmp_path / "home"


def test_flags_win_over_the_environment(base: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    env = {
        **base,
        "ZCODER_MODEL": "env-model",
        "OLLAMA_HOST": "10.0.0.1:1",
        "ZCODER_COMMAND_POLICY": "deny",
        "ZCODER_THINK": "on",
    }
    config = load_config(
        env, model="flag-model", host=":9999", workspace=str(other), yes=True, no_think=True
    )
    assert config.model == "flag-model"
    assert config.host == "http://127.0.0.1:9999"
    assert config.workspace == other.resolve()
    assert config.command_policy is CommandPolicy.ALLOW
    assert config.think is False


def test_workspace_is_stored_canonical(base: dict[str, str], tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "ws")
    assert load_config(base, workspace=str(link)).workspace == (tmp_path / "ws").resolve()


@pytest.mark.parametrize(
    ("env", "flags", "message"),
    [
        ({}, {"workspace": "/nonexistent/zcoder"}, "is not a directory"),
        ({}, {"profile": "root"}, "profile must be coding or sysadmin"),
        ({}, {"yes": True, "profile": "sysadmin"}, "sysadmin"),
        ({"ZCODER_COMMAND_POLICY": "allow", "ZCODER_PROFILE": "sysadmin"}, {}, "sysadmin"),
        ({"ZCODER_COMMAND_POLICY": "sometimes"}, {}, "ZCODER_COMMAND_POLICY"),
        ({"ZCODER_THINK": "maybe"}, {}, "ZCODER_THINK"),
        ({"ZCODER_MAX_TOOL_OUTPUT": "-5"}, {}, "ZCODER_MAX_TOOL_OUTPUT"),
        ({"ZCODER_MAX_OUTPUT_TOKENS": "lots"}, {}, "ZCODER_MAX_OUTPUT_TOKENS"),
        ({}, {"host": "ftp://x"}, "Ollama host"),
        ({}, {"model": "  "}, "model name is empty"),
        ({"ZCODER_MODEL": " "}, {}, "model name is empty"),
    ],
)
def test_bad_settings_are_errors_that_name_them(
    base: dict[str, str], env: dict[str, str], flags: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config({**base, **env}, **flags)  # type: ignore[arg-type]


def test_the_agent_name_comes_from_the_flag_the_environment_or_the_project(
    base: dict[str, str],
) -> None:
    assert load_config(base).agent_name == "ws"
    assert load_config({**base, "ZCODER_AGENT_NAME": "api"}).agent_name == "api"
    assert load_config({**base, "ZCODER_AGENT_NAME": "api"}, name="web").agent_name == "web"
    with pytest.raises(ConfigError, match="--name"):
        load_config(base, name="two words")
    with pytest.raises(ConfigError, match="ZCODER_AGENT_NAME"):
        load_config({**base, "ZCODER_AGENT_NAME": "a\x1bb"})
