"""The caps on a model's reply and their settings, alone: the option table (zcoder.options)
reads them at start without importing the stream's readers (zcoder.model.body,
zcoder.model.watch, and with them asyncio)."""

from __future__ import annotations

from typing import Final

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_REPLY_BYTES",
    "DEFAULT_MAX_REPLY_CHARS",
    "IDLE_SETTING",
    "MAX_LINE_SETTING",
    "MAX_REPLY_BYTES_SETTING",
    "MAX_REPLY_SETTING",
]

MAX_LINE_SETTING: Final = "ZCODER_MAX_LINE_BYTES"
MAX_REPLY_BYTES_SETTING: Final = "ZCODER_MAX_REPLY_BYTES"
DEFAULT_MAX_LINE_BYTES: Final = 4 * 1024 * 1024
"""4 MiB: five times the largest line a 32,000-token reply sent whole could need."""
DEFAULT_MAX_REPLY_BYTES: Final = 64 * 1024 * 1024
"""64 MiB: five times the body of a 32,000-token reply streamed token by token; the
reply's character cap (zcoder.model.watch) normally stops a runaway reply long before."""
IDLE_SETTING: Final = "ZCODER_IDLE_TIMEOUT"
MAX_REPLY_SETTING: Final = "ZCODER_MAX_REPLY_CHARS"
DEFAULT_IDLE_SECONDS: Final = 300.0
"""As long as the read timeout: a large model may take minutes to load or read a prompt."""
DEFAULT_MAX_REPLY_CHARS: Final = 200_000
"""About 50,000 tokens: far past any max_tokens zcoder asks for, so only a server that
ignores max_tokens (or a model repeating itself for ever on one without it) reaches it."""
