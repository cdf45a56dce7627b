"""How full the context window is: the meter's numbers and the /context breakdown.

The server's counts win whenever there are some: after each response the meter shows the
prompt tokens it evaluated plus the tokens it generated. Before the first response, and to
split a total into its parts, zcoder estimates (zcoder.model.tokens) and scales the
estimate by how far off it was the last time the server counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from zcoder.agent.events import ContextUsage
from zcoder.model import Done
from zcoder.model.tokens import estimate_message_tokens, estimate_request_tokens, estimate_tokens

__all__ = ["Breakdown", "ContextMeter", "cut_off_reason"]

LARGEST_TOOL_OUTPUTS: Final = 3
"""How many of the largest recent tool outputs /context lists."""
RECENT_MESSAGES: Final = 40
"""How far back /context looks for large tool outputs."""
WINDOW_FULL_SHARE: Final = 0.98
"""A reply cut off with the request this close to the window ran out of window."""


@dataclass(frozen=True)
class Breakdown:
    """/context's table, in tokens (estimates scaled by the last real count)."""

    system: int
    instructions: int
    tools: int
    history: int
    history_messages: int
    largest_outputs: list[tuple[str, int]]  # (tool name, tokens)
    total: int
    window: int | None
    measured_total: int | None  # the server's count of the last request and reply


class ContextMeter:
    def __init__(self) -> None:
        self.last: ContextUsage | None = None
        self._scale = 1.0  # server's prompt count / our estimate of the same prompt

    def reset(self) -> None:
        """A new or another session: no count belongs to it yet."""
        self.last = None

    def estimate(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        window: int | None,
    ) -> ContextUsage:
        used = round(estimate_request_tokens(messages, tools) * self._scale)
        return ContextUsage(used, window, measured=False)

    def record(
        self,
        done: Done | None,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        window: int | None,
    ) -> ContextUsage | None:
        """The usage after a response, from the server's counts; None when it gave none."""
        if done is None or done.prompt_eval_count is None:
            return None
        estimated = estimate_request_tokens(messages, tools)
        if estimated > 0 and done.prompt_eval_count > 0:
            self._scale = max(0.25, min(4.0, done.prompt_eval_count / estimated))
        used = done.prompt_eval_count + (done.eval_count or 0)
        self.last = ContextUsage(used, window, measured=True)
        return self.last

    def tokens(self, text: str) -> int:
        return round(estimate_tokens(text) * self._scale)

    def breakdown(
        self,
        *,
        base_prompt: str,
        instructions: str,
        history: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        window: int | None,
    ) -> Breakdown:
        system = self.tokens(base_prompt)
        instr = self.tokens(instructions) if instructions else 0
        tool_tokens = self.tokens(json.dumps(list(tools), ensure_ascii=False)) if tools else 0
        history_tokens = round(sum(estimate_message_tokens(m) for m in history) * self._scale)
        outputs = [
            (str(m.get("tool_name") or "tool"), self.tokens(str(m.get("content") or "")))
            for m in history[-RECENT_MESSAGES:]
            if m.get("role") == "tool"
        ]
        outputs.sort(key=lambda item: item[1], reverse=True)
        return Breakdown(
            system=system,
            instructions=instr,
            tools=tool_tokens,
            history=history_tokens,
            history_messages=len(history),
            largest_outputs=outputs[:LARGEST_TOOL_OUTPUTS],
            total=system + instr + tool_tokens + history_tokens,
            window=window,
            measured_total=self.last.used if self.last is not None else None,
        )


def cut_off_reason(
    done: Done | None, *, num_ctx: int | None, num_predict: int | None
) -> str | None:
    """Why a reply was cut off, with the setting that raises the limit; None if it was not."""
    if done is None or done.done_reason != "length":
        return None
    used = (done.prompt_eval_count or 0) + (done.eval_count or 0)
    if num_ctx and used >= num_ctx * WINDOW_FULL_SHARE:
        return (
            f"the reply was cut off: the context window of {num_ctx:,} tokens is full "
            f"({used:,} used). Run /compact, start a new session (/new), or raise the window "
            "with --context-window or ZCODER_CONTEXT_WINDOW"
        )
    limit = f" of {num_predict:,} tokens" if num_predict else ""
    return (
        f"the reply was cut off at the output limit{limit}; raise it with "
        "ZCODER_MAX_OUTPUT_TOKENS (for example ZCODER_MAX_OUTPUT_TOKENS=16384)"
    )
