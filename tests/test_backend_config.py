"""The backend settings: --backend, --base-url, ZCODER_BACKEND, ZCODER_BASE_URL and
ZCODER_API_KEY, validated like the other settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zcoder.config import ConfigError, load_config
from zcoder.model import server_label


@pytest.fixture
def base(tmp_path: Path) -> dict[str, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    return {"ZCODER_WORKSPACE": str(ws), "ZCODER_HOME": str(tmp_path / "home")}


def test_the_default_is_ollama_with_llama_servers_url_ready(base: dict[str, str]) -> None:
    config = load_config(base)
    assert (config.backend, config.base_url, config.api_key) == (
        "ollama",
        "http://127.0.0.1:8080/v1",
        None,
    )
    assert server_label(config) == "127.0.0.1:11434"


def test_openai_from_the_environment_with_its_key(base: dict[str, str]) -> None:
    env = {
        **base,
        "ZCODER_BACKEND": "OpenAI",
        "ZCODER_BASE_URL": "http://gpu-box:8000/v1",
        "ZCODER_API_KEY": " sk-env-key \n",
    }
    config = load_config(env)
    assert (config.backend, config.base_url, config.api_key) == (
        "openai",
        "http://gpu-box:8000/v1",
        "sk-env-key",
    )
    assert server_label(config) == "gpu-box:8000/v1"
    assert "sk-env-key" not in repr(config) and "sk-env-key" not in str(config)


def test_flags_win_and_a_base_url_alone_means_openai(base: dict[str, str]) -> None:
    env = {**base, "ZCODER_BACKEND": "ollama", "ZCODER_BASE_URL": "http://elsewhere:1/v1"}
    assert load_config(env, backend="openai").base_url == "http://elsewhere:1/v1"
    assert load_config(env).backend == "ollama"  # an explicit backend wins over the implication
    config = load_config(base, base_url="localhost:1234")
    assert (config.backend, config.base_url) == ("openai", "http://localhost:1234/v1")
    assert load_config(base, backend="openai").base_url == "http://127.0.0.1:8080/v1"


@pytest.mark.parametrize(
    ("env", "flags", "message"),
    [
        ({"ZCODER_BACKEND": "lmstudio"}, {}, "the backend must be ollama or openai"),
        ({}, {"backend": "vllm"}, "the backend must be ollama or openai (got 'vllm')"),
        ({}, {"base_url": "ftp://host/v1"}, "use http or https"),
        ({"ZCODER_BASE_URL": "http://me:hunter2@host/v1"}, {}, "set ZCODER_API_KEY instead"),
    ],
)
def test_bad_backend_settings_are_config_errors(
    base: dict[str, str], env: dict[str, str], flags: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        load_config({**base, **env}, **flags)
    assert "hunter2" not in str(e.value)
