"""A token estimate for text and chat requests, for when the server has not counted yet.

Servers count tokens exactly (Ollama's ``prompt_eval_count``, the OpenAI form's
``usage``), and zcoder uses their counts whenever it has them. Before the first response,
and to split a count into parts (system prompt, tool schemas, history...), it estimates.

The estimate follows how BPE tokenizers of current code models split text: a word with
the space before it is one token (a long identifier several, about six letters each),
runs of symbols take about one token per two characters, digits one per three, and
indentation about one. It errs on the high side, the safe side for a context window, and
the meter scales it by the ratio of the server's last real count to its own estimate.
No tokenizer is bundled: the real ones are model-specific and tens of megabytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

__all__ = [
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "TokenMemo",
    "estimate_message_tokens",
    "estimate_request_tokens",
    "estimate_tokens",
]

_PIECES: Final = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]+|\s+")
_LETTERS_PER_TOKEN: Final = 6
_DIGITS_PER_TOKEN: Final = 3
_SYMBOLS_PER_TOKEN: Final = 2
_BLANKS_PER_TOKEN: Final = 16
MESSAGE_OVERHEAD_TOKENS: Final = 4
"""What a chat template adds around each message (role markers, separators)."""
IMAGE_TOKENS: Final = 768
"""About what one image takes of the window: vision encoders give it a few hundred to a
thousand or more (Gemma 3: 256, LLaVA: 576, Qwen2.5-VL: by its size)."""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is for a typical code model's tokenizer."""
    count = 0
    for match in _PIECES.finditer(text):
        piece = match.group()
        first = piece[0]
        if first.isspace():
            # A single space joins the word after it; indentation is about one token.
            if piece != " ":
                count += _ceil_div(len(piece), _BLANKS_PER_TOKEN)
        elif first.isdigit():
            count += _ceil_div(len(piece), _DIGITS_PER_TOKEN)
        elif first.isascii() and first.isalpha():
            count += _ceil_div(len(piece), _LETTERS_PER_TOKEN)
        elif piece.isascii():
            count += _ceil_div(len(piece), _SYMBOLS_PER_TOKEN)
        else:
            # Other scripts and emoji: about one token per character, more for rare ones.
            count += sum(1 if ord(c) < 0x3000 else 2 for c in piece)
    return count


def estimate_message_tokens(
    message: Mapping[str, Any], count: Callable[[str], int] = estimate_tokens
) -> int:
    """``count`` estimates one text: ``estimate_tokens``, or a memo of it."""
    tokens = MESSAGE_OVERHEAD_TOKENS + count(str(message.get("content") or ""))
    thinking = message.get("thinking")
    if thinking:
        tokens += count(str(thinking))
    for call in message.get("tool_calls") or ():
        tokens += count(json.dumps(call, ensure_ascii=False))
    return tokens + IMAGE_TOKENS * len(message.get("images") or ())


def estimate_request_tokens(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] = (),
    count: Callable[[str], int] = estimate_tokens,
) -> int:
    """The prompt a chat request makes: every message plus the tool schemas."""
    total = sum(estimate_message_tokens(m, count) for m in messages)
    if tools:
        total += count(json.dumps(list(tools), ensure_ascii=False))
    return total


class TokenMemo:
    """``estimate_tokens`` remembered per text, for estimating the same history again and
    again (the context meter does at every refresh; a long session's history is megabytes,
    about 0.1 s a megabyte to estimate). Each ``request`` keeps only the texts of that
    request, so the memo holds no more than the history being estimated."""

    def __init__(self) -> None:
        self._counted: dict[str, int] = {}

    def request(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
    ) -> int:
        """``estimate_request_tokens`` of this request, texts seen last time not recounted."""
        known, kept = self._counted, {}

        def count(text: str) -> int:
            tokens = known.get(text)
            if tokens is None:
                tokens = estimate_tokens(text)
            kept[text] = tokens
            return tokens

        total = estimate_request_tokens(messages, tools, count)
        self._counted = kept
        return total
