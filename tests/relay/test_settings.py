from __future__ import annotations

import pytest

from zcoder.relay.settings import RelayMode, load_relay_settings


def test_defaults_are_those_of_the_design():
    settings = load_relay_settings({})
    assert settings.enabled
    assert (settings.max_bytes, settings.max_message_chars, settings.max_queue) == (
        65536,
        16000,
        16,
    )
    assert settings.io_timeout == 2.0
    assert settings.max_auto_turns == 8
    assert settings.mode is RelayMode.ON


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"ZCODER_RELAY": "maybe"}, "ZCODER_RELAY"),
        ({"ZCODER_RELAY_MAX_BYTES": "1023"}, "ZCODER_RELAY_MAX_BYTES"),
        ({"ZCODER_RELAY_MAX_BYTES": "1048577"}, "ZCODER_RELAY_MAX_BYTES"),
        ({"ZCODER_RELAY_MAX_BYTES": "64k"}, "ZCODER_RELAY_MAX_BYTES"),
        ({"ZCODER_RELAY_MAX_MESSAGE_CHARS": "0"}, "ZCODER_RELAY_MAX_MESSAGE_CHARS"),
        (
            {"ZCODER_RELAY_MAX_BYTES": "2048", "ZCODER_RELAY_MAX_MESSAGE_CHARS": "2049"},
            "ZCODER_RELAY_MAX_MESSAGE_CHARS",
        ),
        ({"ZCODER_RELAY_MAX_QUEUE": "0"}, "ZCODER_RELAY_MAX_QUEUE"),
        ({"ZCODER_RELAY_MAX_QUEUE": "257"}, "ZCODER_RELAY_MAX_QUEUE"),
        ({"ZCODER_RELAY_IO_TIMEOUT": "0.5"}, "ZCODER_RELAY_IO_TIMEOUT"),
        ({"ZCODER_RELAY_IO_TIMEOUT": "31"}, "ZCODER_RELAY_IO_TIMEOUT"),
        ({"ZCODER_RELAY_IO_TIMEOUT": "nan"}, "ZCODER_RELAY_IO_TIMEOUT"),
        ({"ZCODER_RELAY_IO_TIMEOUT": "soon"}, "ZCODER_RELAY_IO_TIMEOUT"),
        ({"ZCODER_RELAY_MAX_AUTO_TURNS": "-1"}, "ZCODER_RELAY_MAX_AUTO_TURNS"),
        ({"ZCODER_RELAY_MAX_AUTO_TURNS": "1001"}, "ZCODER_RELAY_MAX_AUTO_TURNS"),
        ({"ZCODER_RELAY_MAX_AUTO_TURNS": "eight"}, "ZCODER_RELAY_MAX_AUTO_TURNS"),
    ],
)
def test_invalid_setting_disables_relay_naming_the_setting(env, named):
    settings = load_relay_settings(env)
    assert not settings.enabled
    assert settings.disabled_reason is not None
    assert named in settings.disabled_reason


def test_bounds_are_inclusive():
    settings = load_relay_settings(
        {
            "ZCODER_RELAY_MAX_BYTES": "1024",
            "ZCODER_RELAY_MAX_MESSAGE_CHARS": "1024",
            "ZCODER_RELAY_MAX_QUEUE": "256",
            "ZCODER_RELAY_IO_TIMEOUT": "30",
            "ZCODER_RELAY_MAX_AUTO_TURNS": "1000",
        }
    )
    assert settings.enabled
    assert (settings.max_bytes, settings.max_message_chars, settings.max_queue) == (1024, 1024, 256)
    assert settings.max_auto_turns == 1000


def test_max_auto_turns_zero_means_no_limit_and_is_valid():
    settings = load_relay_settings({"ZCODER_RELAY_MAX_AUTO_TURNS": "0"})
    assert settings.enabled and settings.max_auto_turns == 0


def test_off_and_paused_modes():
    assert not load_relay_settings({"ZCODER_RELAY": "off"}).enabled
    paused = load_relay_settings({"ZCODER_RELAY": "paused"})
    assert paused.enabled and paused.mode is RelayMode.PAUSED
