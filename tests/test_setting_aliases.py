"""Settings as zcoder.zsh users type them (issue 30 item 8): ``--context-window auto`` and
``ZCODER_COMPACT_PERCENT``, through load_config and the real program."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.test_oneshot import Env, make_env
from tests.test_oneshot_bounds import run
from zcoder.config import ConfigError, load_config
from zcoder.model.context import (
    CONTEXT_WINDOW_CAP,
    explicit_window,
    resolve_context_window,
    settings_window,
)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def test_auto_in_the_flag_wins_over_the_variable_and_leaves_the_window_to_be_sized() -> None:
    assert explicit_window("auto", {"ZCODER_CONTEXT_WINDOW": "20000"}) is None
    assert explicit_window(" AUTO ", {}) is None
    assert explicit_window(None, {"ZCODER_CONTEXT_WINDOW": "auto"}) is None


async def test_auto_in_settings_json_asks_the_server_for_that_model() -> None:
    settings = {"context_window": 9000, "models": {"qwen3": {"context_window": "auto"}}}
    assert settings_window(settings, "qwen3") == (None, [])
    assert settings_window(settings, "other")[0] is not None
    window = await resolve_context_window("qwen3", explicit=None, settings=settings, probe=None)
    assert window.kind == "default"


def test_a_bad_window_says_auto_is_allowed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="or auto; got 'big'"):
        load_config({}, workspace=str(tmp_path), context_window="big")


def test_compact_percent_is_compact_at(tmp_path: Path) -> None:
    base = {"ZCODER_HOME": str(tmp_path)}
    assert load_config({**base, "ZCODER_COMPACT_PERCENT": "70"}).compact_at == 0.70
    assert load_config({**base, "ZCODER_COMPACT_PERCENT": "off"}).compact_at is None
    same = {**base, "ZCODER_COMPACT_PERCENT": "70%", "ZCODER_COMPACT_AT": "70"}
    assert load_config(same).compact_at == 0.70


def test_compact_percent_and_compact_at_that_disagree_are_an_error_naming_both(
    tmp_path: Path,
) -> None:
    both = {"ZCODER_HOME": str(tmp_path), "ZCODER_COMPACT_AT": "80", "ZCODER_COMPACT_PERCENT": "60"}
    with pytest.raises(ConfigError, match="ZCODER_COMPACT_AT=80 and ZCODER_COMPACT_PERCENT=60"):
        load_config(both)
    bad = {"ZCODER_HOME": str(tmp_path), "ZCODER_COMPACT_PERCENT": "40"}
    with pytest.raises(ConfigError, match="ZCODER_COMPACT_PERCENT must be a percentage"):
        load_config(bad)


def test_the_program_sizes_the_window_itself_with_context_window_auto(
    env: Env, fake: FakeOllama
) -> None:
    env.vars["ZCODER_CONTEXT_WINDOW"] = "20000"
    fake.enqueue(Turn.text("hello"))
    done = run(env, "--context-window", "auto", "--prompt", "hi", server=fake)
    assert done.returncode == 0, done.stderr
    (body,) = fake.chat_bodies
    assert body["options"]["num_ctx"] != 20000
    assert body["options"]["num_ctx"] <= CONTEXT_WINDOW_CAP


def test_the_program_refuses_disagreeing_compact_settings_with_exit_2(env: Env) -> None:
    env.vars.update(ZCODER_COMPACT_AT="80", ZCODER_COMPACT_PERCENT="90")
    done = run(env, "--prompt", "hi")
    assert done.returncode == 2
    assert b"disagree" in done.stderr and b"Traceback" not in done.stderr
