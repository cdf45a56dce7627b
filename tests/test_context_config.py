"""--context-window, ZCODER_CONTEXT_WINDOW and ZCODER_KEEP_ALIVE: read once, bad is exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcoder.base.errors import EXIT_USAGE
from zcoder.cli import main
from zcoder.config import ConfigError, load_config
from zcoder.model.context import ContextWindow


@pytest.fixture
def base(tmp_path: Path) -> dict[str, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    return {"ZCODER_WORKSPACE": str(ws), "ZCODER_HOME": str(tmp_path / "home")}


def test_by_default_zcoder_chooses_the_window_and_ollama_keeps_its_keep_alive(
    base: dict[str, str],
) -> None:
    config = load_config(base)
    assert config.context_window is None
    assert config.keep_alive is None


def test_the_flag_wins_over_the_environment(base: dict[str, str]) -> None:
    env = {**base, "ZCODER_CONTEXT_WINDOW": "20000"}
    assert load_config(env, context_window="32k").context_window == ContextWindow(
        32768, "--context-window", "flag"
    )
    assert load_config(env).context_window == ContextWindow(20000, "ZCODER_CONTEXT_WINDOW", "env")


@pytest.mark.parametrize(
    ("flag", "env", "named"),
    [("big", "", "--context-window"), (None, "1024", "ZCODER_CONTEXT_WINDOW")],
)
def test_a_bad_window_is_a_usage_error_naming_the_setting(
    base: dict[str, str], flag: str | None, env: str, named: str
) -> None:
    with pytest.raises(ConfigError, match=f"{named} must be a whole number of tokens"):
        load_config({**base, "ZCODER_CONTEXT_WINDOW": env}, context_window=flag)


def test_keep_alive_is_read_from_the_environment(base: dict[str, str]) -> None:
    assert load_config({**base, "ZCODER_KEEP_ALIVE": "30m"}).keep_alive == "30m"
    assert load_config({**base, "ZCODER_KEEP_ALIVE": "-1"}).keep_alive == -1
    with pytest.raises(ConfigError, match="ZCODER_KEEP_ALIVE"):
        load_config({**base, "ZCODER_KEEP_ALIVE": "a while"})


def test_the_cli_refuses_a_bad_context_window(
    base: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key, value in base.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("ZCODER_CONTEXT_WINDOW", raising=False)
    assert main(["--context-window", "lots", "--print-instructions"]) == EXIT_USAGE
    assert "zcoder: --context-window must be a whole number of tokens" in capsys.readouterr().err
    assert main(["--context-window", "16384", "--print-instructions"]) == 0


def test_the_help_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--context-window N" in capsys.readouterr().out
