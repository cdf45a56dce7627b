"""The context window: every source in its order, the cap and floor, and what Ollama says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama
from zcoder.model import ModelHTTPError, ModelNotFound, OllamaClient, OllamaUnreachable
from zcoder.model.context import (
    CONTEXT_WINDOW_CAP,
    CONTEXT_WINDOW_FLOOR,
    DEFAULT_CONTEXT_WINDOW,
    MIN_CONTEXT_WINDOW,
    ContextWindow,
    allocation_notice,
    automatic_window,
    explicit_window,
    loaded_context_length,
    parse_context_window,
    parse_keep_alive,
    resolve_context_window,
    resolve_for_model,
    settings_window,
    trained_context_length,
)
from zcoder.settings_file import load_settings_file

MODEL = "qwen3-coder"


class Probe:
    """What Ollama would answer; an exception instance is raised instead."""

    def __init__(
        self,
        loaded: int | Exception | None = None,
        trained: int | Exception | None = None,
    ) -> None:
        self.loaded, self.trained = loaded, trained
        self.asked: list[str] = []

    async def loaded_context_length(self, model: str) -> int | None:
        self.asked.append("ps")
        if isinstance(self.loaded, Exception):
            raise self.loaded
        return self.loaded

    async def trained_context_length(self, model: str) -> int | None:
        self.asked.append("show")
        if isinstance(self.trained, Exception):
            raise self.trained
        return self.trained


class Server:
    """An OpenAI-compatible client: one fixed window, from the server's metadata."""

    def __init__(self, tokens: int | None) -> None:
        self.tokens = tokens

    async def context_length(self, model: str) -> int | None:
        return self.tokens


FLAG = ContextWindow(12288, "--context-window", "flag")


# -- the order of the sources -----------------------------------------------------------


def test_the_flag_wins_over_the_environment() -> None:
    window = explicit_window("12288", {"ZCODER_CONTEXT_WINDOW": "20000"})
    assert window == ContextWindow(12288, "--context-window", "flag")


def test_the_environment_is_next() -> None:
    window = explicit_window(None, {"ZCODER_CONTEXT_WINDOW": " 20000 "})
    assert window == ContextWindow(20000, "ZCODER_CONTEXT_WINDOW", "env")
    assert explicit_window(None, {"ZCODER_CONTEXT_WINDOW": "  "}) is None
    assert explicit_window(None, {}) is None


async def test_an_explicit_window_wins_over_the_settings_file_and_ollama() -> None:
    probe = Probe(loaded=16384, trained=131072)
    settings = {"context_window": 9000, "models": {MODEL: {"context_window": 10000}}}
    window = await resolve_context_window(MODEL, explicit=FLAG, settings=settings, probe=probe)
    assert window == FLAG
    assert probe.asked == []  # Ollama is not even asked


async def test_the_settings_file_wins_over_ollama_its_model_entry_first() -> None:
    probe = Probe(loaded=16384, trained=131072)
    settings = {"context_window": 9000, "models": {MODEL: {"context_window": 10000}}}
    window = await resolve_context_window(MODEL, explicit=None, settings=settings, probe=probe)
    assert (window.tokens, window.kind) == (10000, "settings")
    assert window.source == f"settings.json, models.{MODEL}.context_window"
    assert probe.asked == []

    other = await resolve_context_window("llama3.2", explicit=None, settings=settings, probe=probe)
    assert (other.tokens, other.source) == (9000, "settings.json, context_window")


def test_a_settings_entry_matches_the_model_with_or_without_its_latest_tag() -> None:
    settings = {"models": {"qwen3-coder:latest": {"context_window": "24k"}}}
    window, warnings = settings_window(settings, "Qwen3-Coder")
    assert window is not None and window.tokens == 24 * 1024
    assert warnings == []
    assert settings_window(settings, "qwen3-coder:30b")[0] is None


async def test_a_loaded_model_keeps_the_window_ollama_allocated() -> None:
    probe = Probe(loaded=16384, trained=262144)
    window = await resolve_context_window(MODEL, explicit=None, probe=probe)
    assert window == ContextWindow(16384, "Ollama has it loaded with 16384", "loaded")
    assert probe.asked == ["ps"]  # no /api/show needed


async def test_a_loaded_window_above_the_cap_is_kept_it_already_fits() -> None:
    window = await resolve_context_window(MODEL, explicit=None, probe=Probe(loaded=65536))
    assert window.tokens == 65536


async def test_a_loaded_window_below_the_floor_is_raised_to_it() -> None:
    window = await resolve_context_window(
        MODEL, explicit=None, probe=Probe(loaded=4096, trained=262144)
    )
    assert window.tokens == CONTEXT_WINDOW_FLOOR
    assert window.source == "Ollama has it loaded with 4096, raised to the floor 8192"


async def test_the_floor_never_passes_the_trained_length() -> None:
    window = await resolve_context_window(
        MODEL, explicit=None, probe=Probe(loaded=4096, trained=6144)
    )
    assert window.tokens == 6144


async def test_the_trained_length_is_capped() -> None:
    window = await resolve_context_window(MODEL, explicit=None, probe=Probe(trained=262144))
    assert window == ContextWindow(
        CONTEXT_WINDOW_CAP, "the model's trained length 262144, capped at 32768", "trained"
    )


async def test_a_trained_length_under_the_cap_is_used_as_it_is() -> None:
    window = await resolve_context_window(MODEL, explicit=None, probe=Probe(trained=16384))
    assert window == ContextWindow(16384, "the model's trained length 16384", "trained")
    small = await resolve_context_window(MODEL, explicit=None, probe=Probe(trained=4096))
    assert small.tokens == 4096  # Ollama would clamp any larger num_ctx to it anyway


async def test_unreachable_ollama_gives_the_default_and_says_why() -> None:
    probe = Probe(loaded=OllamaUnreachable("http://127.0.0.1:9"))
    window = await resolve_context_window(MODEL, explicit=None, probe=probe)
    assert (window.tokens, window.kind) == (DEFAULT_CONTEXT_WINDOW, "default")
    assert window.source == "default, Ollama did not say"
    assert "not reachable" in window.note
    assert probe.asked == ["ps"]


async def test_a_failing_show_gives_the_default() -> None:
    window = await resolve_context_window(
        MODEL, explicit=None, probe=Probe(trained=ModelNotFound(MODEL))
    )
    assert window.tokens == DEFAULT_CONTEXT_WINDOW
    assert "not found" in window.note


async def test_ollama_without_a_context_length_gives_the_default() -> None:
    window = await resolve_context_window(MODEL, explicit=None, probe=Probe())
    assert (window.tokens, window.source) == (DEFAULT_CONTEXT_WINDOW, "default, Ollama did not say")


async def test_an_ollama_without_api_ps_still_reads_the_trained_length() -> None:
    probe = Probe(loaded=ModelHTTPError(404, "404 page not found", url="/api/ps"), trained=8192)
    window = await resolve_context_window(MODEL, explicit=None, probe=probe)
    assert (window.tokens, window.kind) == (8192, "trained")


async def test_a_small_loaded_window_is_raised_even_when_show_fails() -> None:
    probe = Probe(loaded=2048, trained=ModelNotFound(MODEL))
    window = await resolve_context_window(MODEL, explicit=None, probe=probe)
    assert window.tokens == CONTEXT_WINDOW_FLOOR


async def test_an_openai_compatible_server_reports_its_own_window() -> None:
    window = await resolve_context_window(MODEL, explicit=None, probe=Server(65536))
    assert window == ContextWindow(65536, "the server reports 65536", "server")
    unknown = await resolve_context_window(MODEL, explicit=None, probe=Server(None))
    assert (unknown.tokens, unknown.source) == (
        DEFAULT_CONTEXT_WINDOW,
        "default, the server did not say",
    )


async def test_without_a_probe_the_default() -> None:
    window = await resolve_context_window(MODEL, explicit=None, probe=None)
    assert window.kind == "default"


def test_the_numbers_hold_together() -> None:
    assert MIN_CONTEXT_WINDOW < CONTEXT_WINDOW_FLOOR < DEFAULT_CONTEXT_WINDOW < CONTEXT_WINDOW_CAP
    assert automatic_window(loaded=None, trained=None).tokens == DEFAULT_CONTEXT_WINDOW


# -- what users write ----------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "tokens"), [("16384", 16384), ("32k", 32768), (" 8K ", 8192)])
def test_a_window_is_a_number_of_tokens_or_k(raw: str, tokens: int) -> None:
    assert parse_context_window(raw, "--context-window") == tokens


@pytest.mark.parametrize("raw", ["", "abc", "-4096", "1000", "16384.5", "1k", "32 k tokens"])
def test_a_bad_window_names_the_setting(raw: str) -> None:
    with pytest.raises(ValueError, match="ZCODER_CONTEXT_WINDOW must be a whole number"):
        parse_context_window(raw, "ZCODER_CONTEXT_WINDOW")


def test_a_bad_explicit_window_is_an_error_not_a_fallback() -> None:
    with pytest.raises(ValueError, match="--context-window"):
        explicit_window("lots", {"ZCODER_CONTEXT_WINDOW": "16384"})


@pytest.mark.parametrize(
    ("raw", "value"),
    [("300", 300), ("-1", -1), ("0", 0), ("30m", "30m"), ("1h30m", "1h30m"), ("1.5h", "1.5h")],
)
def test_keep_alive_is_seconds_or_a_duration(raw: str, value: str | int) -> None:
    assert parse_keep_alive(raw) == value


@pytest.mark.parametrize("raw", ["forever", "30 minutes", "m", "10d"])
def test_a_bad_keep_alive_says_what_is_accepted(raw: str) -> None:
    with pytest.raises(ValueError, match="ZCODER_KEEP_ALIVE must be a duration"):
        parse_keep_alive(raw)


# -- the settings file ----------------------------------------------------------------------


def test_a_missing_settings_file_is_empty_and_silent(tmp_path: Path) -> None:
    settings = load_settings_file(tmp_path)
    assert (settings.data, settings.warnings) == ({}, ())


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b'{"context_window": 16384,', "is not valid JSON"),
        (b"[16384]", "must hold a JSON object"),
        (b'{"context_window": "\xff"}', "is not UTF-8 text"),
    ],
)
def test_a_bad_settings_file_is_ignored_with_a_warning(
    tmp_path: Path, content: bytes, why: str
) -> None:
    (tmp_path / "settings.json").write_bytes(content)
    settings = load_settings_file(tmp_path)
    assert settings.data == {}
    [warning] = settings.warnings
    assert str(tmp_path / "settings.json") in warning and why in warning


def test_bad_values_in_the_settings_file_are_skipped_with_warnings() -> None:
    data = {
        "context_window": True,
        "models": {MODEL: {"context_window": 100}, "llama3.2": "big"},
    }
    window, warnings = settings_window(data, MODEL)
    assert window is None
    assert any(f"models.{MODEL}.context_window must be" in w for w in warnings)
    assert any("context_window must be a whole number" in w for w in warnings)
    assert settings_window({"models": [1]}, MODEL)[1] == [
        'settings.json: "models" must be an object of model names; ignored'
    ]
    assert settings_window(data, "llama3.2")[1][0].startswith('settings.json: "models.llama3.2"')


def test_a_bad_model_entry_falls_back_to_the_global_value() -> None:
    data = {"context_window": 20000, "models": {MODEL: {"context_window": "huge"}}}
    window, warnings = settings_window(data, MODEL)
    assert window is not None and window.tokens == 20000
    assert len(warnings) == 1


async def test_resolving_with_a_broken_settings_file_falls_through_to_ollama(
    tmp_path: Path,
) -> None:
    (tmp_path / "settings.json").write_text("{not json")
    window = await resolve_for_model(
        MODEL, explicit=None, home=tmp_path, probe=Probe(trained=131072)
    )
    assert window.tokens == CONTEXT_WINDOW_CAP
    [warning] = window.warnings
    assert "is ignored: it is not valid JSON" in warning


async def test_resolving_reads_the_settings_file_of_the_home(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps({"models": {MODEL: {"context_window": 24576}}})
    )
    window = await resolve_for_model(MODEL, explicit=None, home=tmp_path, probe=Probe())
    assert (window.tokens, window.kind, window.warnings) == (24576, "settings", ())


# -- reading Ollama's answers ------------------------------------------------------------------


def test_the_trained_length_is_read_under_the_architecture() -> None:
    show = {"model_info": {"general.architecture": "qwen3moe", "qwen3moe.context_length": 262144}}
    assert trained_context_length(show) == 262144
    assert trained_context_length({"model_info": {"llama.context_length": 8192}}) == 8192
    assert trained_context_length({"model_info": {"general.architecture": "x"}}) is None
    assert trained_context_length({}) is None


def test_the_loaded_window_is_matched_by_name() -> None:
    running = [
        {"name": "llama3.2:latest", "model": "llama3.2:latest", "context_length": 4096},
        {"name": "qwen3-coder:latest", "model": "qwen3-coder:latest", "context_length": 32768},
    ]
    assert loaded_context_length(running, "qwen3-coder") == 32768
    assert loaded_context_length(running, "llama3.2:latest") == 4096
    assert loaded_context_length(running, "qwen3-coder:30b") is None
    assert loaded_context_length([{"name": "qwen3-coder:latest"}], "qwen3-coder") is None


async def test_the_client_reads_show_and_ps_from_the_fake(fake: FakeOllama) -> None:
    fake.context_lengths["qwen3-coder"] = 262144
    fake.preload("llama3.2", 8192)
    async with OllamaClient(fake.url) as client:
        assert await client.trained_context_length("qwen3-coder") == 262144
        assert await client.loaded_context_length("llama3.2") == 8192
        assert await client.loaded_context_length("qwen3-coder") is None
        window = await resolve_context_window("qwen3-coder", explicit=None, probe=client)
        fake.missing.add("gone")
        with pytest.raises(ModelNotFound):
            await client.trained_context_length("gone")
    assert window.tokens == CONTEXT_WINDOW_CAP


async def test_the_client_reports_an_unreachable_ollama() -> None:
    from tests.test_oneshot import free_port

    async with OllamaClient(f"127.0.0.1:{free_port()}") as client:
        window = await resolve_context_window(MODEL, explicit=None, probe=client)
    assert window.kind == "default" and "not reachable" in window.note


# -- when Ollama allocates another window ----------------------------------------------------


def test_no_notice_when_ollama_allocated_what_was_asked() -> None:
    window = ContextWindow(32768, "the model's trained length 262144, capped at 32768", "trained")
    assert allocation_notice(MODEL, window, 32768) is None
    assert allocation_notice(MODEL, window, None) is None  # not loaded: nothing to say


def test_a_smaller_allocation_says_what_to_do() -> None:
    window = ContextWindow(32768, "ZCODER_CONTEXT_WINDOW", "env")
    notice = allocation_notice(MODEL, window, 4096)
    assert notice is not None
    assert "4096-token context window, not the 32768" in notice
    assert "(ZCODER_CONTEXT_WINDOW)" in notice
    assert "--context-window 4096" in notice and "docs/models.md" in notice


def test_a_larger_allocation_says_how_to_use_it() -> None:
    window = ContextWindow(16384, "default, Ollama did not say", "default")
    notice = allocation_notice(MODEL, window, 65536)
    assert notice is not None and "more than the 16384" in notice
    assert "--context-window 65536" in notice
