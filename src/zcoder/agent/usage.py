"""How full the context window is: the meter's numbers and the /context breakdown.

The server's counts win whenever there are some: after each response the meter shows the
prompt tokens it evaluated plus the tokens it generated. Before the first response, and to
split a total into its parts, zcoder estimates (zcoder.model.tokens) and scales the
estimate by how far off it was the last time the server counted (at most 4 times either
way). The size of the next request (what automatic compaction decides on) is predicted
from the last count plus what was added since, or from the scaled estimate when that is
larger: a server whose tokenizer counts far more than the estimate is not under-predicted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from zcoder.agent.status import ContextUsage
from zcoder.base.plural import counted
from zcoder.model import Done
from zcoder.model.tokens import TokenMemo, estimate_message_tokens, estimate_tokens

# A request's messages or tool schemas, as they go on the wire.
Records: TypeAlias = Sequence[Mapping[str, Any]]

__all__ = ["Breakdown", "ContextMeter", "cut_off_reason", "output_cap", "spent_tokens"]

LARGEST_TOOL_OUTPUTS: Final = 3
"""How many of the largest recent tool outputs /context lists."""
RECENT_MESSAGES: Final = 40
"""How far back /context looks for large tool outputs."""
WINDOW_FULL_SHARE: Final = 0.98
"""A reply cut off with the request this close to the window ran out of window."""
MIN_OUTPUT_TOKENS: Final = 1024
"""The output cap never goes below this, however full the window: a reply needs room
(compaction makes the room before the window is that full)."""
OUTPUT_CAP_MARGIN: Final = 0.03
"""The share of the window kept free beside the estimated prompt, for estimate errors."""
UNMEASURED_PROMPT_SHARE: Final = 0.5
"""Before the server has counted a request of the session, the prompt estimate may be
off by the model's tokenizer: this much of it again is kept free."""


def output_cap(
    window: int | None, prompt_tokens: int, requested: int | None, *, measured: bool = True
) -> int | None:
    """The ``max_tokens`` (``num_predict``) to ask for: ``requested``, lowered to what the
    window leaves after the estimated prompt (and a margin, larger while the estimate is
    not ``measured``: scaled by a count of the server), never below
    ``MIN_OUTPUT_TOKENS``. A server such as vLLM refuses a request whose prompt and
    output limit together pass the window. None when nothing was requested."""
    if requested is None or requested <= 0:
        return requested
    if not window:
        return requested
    unsure = 0 if measured else int(prompt_tokens * UNMEASURED_PROMPT_SHARE)
    left = window - prompt_tokens - unsure - int(window * OUTPUT_CAP_MARGIN)
    return min(requested, max(left, MIN_OUTPUT_TOKENS))


def spent_tokens(done: Done | None) -> int:
    """What one request cost as the server counted it: the prompt tokens it evaluated and
    the tokens it generated (0 when it gave no count)."""
    if done is None:
        return 0
    return (done.prompt_eval_count or 0) + (done.eval_count or 0)


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
    max_output: int | None = None  # the output limit asked for (ZCODER_MAX_OUTPUT_TOKENS)
    compact_at: float | None = None  # the share of the window that compacts by itself


class ContextMeter:
    def __init__(self) -> None:
        self.last: ContextUsage | None = None
        self._scale = 1.0  # server's prompt count / our estimate of the same prompt
        self._memo = TokenMemo()  # the history is estimated again at every refresh
        self._counted_messages: int | None = None  # how many messages ``last`` counted
        self.spent = 0  # every request's count since this process started (a goal's budget)

    def reset(self) -> None:
        """A new or another session: no count belongs to it yet."""
        self.last = None
        self._counted_messages = None

    def raw_estimate(self, messages: Records, tools: Records) -> int:
        """The estimate of a request, not scaled."""
        return self._memo.request(messages, tools)

    def estimate(self, messages: Records, tools: Records, window: int | None) -> ContextUsage:
        used = round(self._memo.request(messages, tools) * self._scale)
        return ContextUsage(used, window, measured=False)

    def record(
        self, done: Done | None, messages: Records, tools: Records, window: int | None
    ) -> ContextUsage | None:
        """The usage after a response, from the server's counts; None when it gave none."""
        self.spent += spent_tokens(done)
        if done is None or done.prompt_eval_count is None:
            return None
        estimated = self._memo.request(messages, tools)
        if estimated > 0 and done.prompt_eval_count > 0:
            self._scale = max(0.25, min(4.0, done.prompt_eval_count / estimated))
        self.last = ContextUsage(spent_tokens(done), window, measured=True)
        self._counted_messages = len(messages)
        return self.last

    def predict(self, messages: Records, tools: Records, window: int | None) -> ContextUsage:
        """The size of the request ``messages`` would be: the last count (its prompt and
        reply) plus the messages added after that reply, or the scaled estimate of the
        whole when that is larger."""
        estimate = self.estimate(messages, tools, window)
        last, counted = self.last, self._counted_messages
        if last is None or last.window != window or counted is None or len(messages) < counted:
            return estimate
        added = list(messages[counted:])
        if added and added[0].get("role") == "assistant":
            added = added[1:]  # the reply: the count has it (the tokens generated)
        since = round(sum(estimate_message_tokens(m) for m in added) * self._scale)
        return ContextUsage(max(estimate.used, last.used + since), window, measured=False)

    def tokens(self, text: str) -> int:
        return round(estimate_tokens(text) * self._scale)

    def breakdown(
        self,
        *,
        base_prompt: str,
        instructions: str,
        history: Records,
        tools: Records,
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
    done: Done | None,
    *,
    num_ctx: int | None,
    num_predict: int | None,
    requested: int | None = None,
) -> str | None:
    """Why a reply was cut off, with the setting that raises the limit; None if it was not.
    ``num_predict`` is the limit the request asked for, ``requested`` the setting's (more
    when the window left less: see output_cap)."""
    if done is None or done.done_reason != "length":
        return None
    used = (done.prompt_eval_count or 0) + (done.eval_count or 0)
    if num_ctx and used >= num_ctx * WINDOW_FULL_SHARE:
        return (
            f"the reply was cut off: the context window of {num_ctx:,} tokens is full "
            f"({used:,} used). Run /compact, start a new session (/new), or raise the window "
            "with --context-window or ZCODER_CONTEXT_WINDOW"
        )
    if num_predict and requested and num_predict < requested:
        return (
            f"the reply was cut off at {num_predict:,} tokens, all the context window of "
            f"{num_ctx or 0:,} tokens left after the request. Run /compact, start a new "
            "session (/new), or raise the window with --context-window or "
            "ZCODER_CONTEXT_WINDOW"
        )
    limit = f" of {num_predict:,} tokens" if num_predict else ""
    return (
        f"the reply was cut off at the output limit{limit}; raise it with "
        "ZCODER_MAX_OUTPUT_TOKENS (for example ZCODER_MAX_OUTPUT_TOKENS=16384)"
    )


TOOL_OUTPUT_SHARE: Final = 0.25
"""A tool result may take at most this share of the context window; the rest is cut."""


def fit_tool_output(output: str, *, window: int | None, name: str) -> str:
    """``output`` cut to its head and tail when it would take too much of the window.

    The marker says how much was cut and how to read the rest, so the model can ask for
    the part it needs instead of losing its instructions to one large result.
    """
    if not window:
        return output
    budget = int(window * TOOL_OUTPUT_SHARE)
    tokens = estimate_tokens(output)
    if tokens <= budget:
        return output
    keep_chars = max(200, int(len(output) * budget / tokens))
    head, tail = output[: keep_chars * 2 // 3], output[-(keep_chars // 3) :]
    cut = output[len(head) : len(output) - len(tail)]
    how = (
        "read_file_range for a part of a file"
        if name.startswith("read_file")
        else "search for a pattern, or a narrower command (head, tail, grep)"
    )
    lines = counted(cut.count("\n") + 1, "line")
    marker = (
        f"\n[… {lines}, about {estimate_tokens(cut):,} tokens, cut "
        f"here: the whole {name} result (~{tokens:,} tokens) would take more than a quarter "
        f"of the {window:,}-token context window. Read the rest in parts: {how}. …]\n"
    )
    return head + marker + tail


FREE_MEANS: Final = "(left in the window: room for the reply, then for more history)"
OUTPUT_CAP_MEANS: Final = (
    "the most one reply may take of the free tokens; what it writes joins the history."
)


def render_breakdown(b: Breakdown, source: str | None = None) -> str:
    """/context's text: where the tokens of the next request go, and the window."""
    rows: list[tuple[str, int]] = [
        ("system prompt", b.system),
        ("project instructions (AGENTS.md)", b.instructions),
        ("tool schemas", b.tools),
        (
            f"history ({counted(b.history_messages, 'message')})",
            b.history,
        ),
    ]
    width = max(len(label) for label, _ in rows) + 2
    basis = "scaled to the server's last count" if b.measured_total is not None else "estimated"
    lines = [f"Context of the next request, in tokens ({basis}):"]
    lines += [f"  {label.ljust(width)}{tokens:>8,}" for label, tokens in rows]
    lines.append(f"  {'total'.ljust(width)}{b.total:>8,}")
    if b.window:
        free = max(0, b.window - b.total)
        lines.append(f"  {'free'.ljust(width)}{free:>8,}  {FREE_MEANS}")
        lines.append(
            f"Window: {b.window:,} tokens ({100 * b.total // b.window}% used)"
            + (f", from {source}" if source else "")
        )
    else:
        lines.append("Window: unknown" + (f" ({source})" if source else ""))
    if b.max_output:
        measured = b.measured_total is not None
        cap = output_cap(b.window, b.total, b.max_output, measured=measured) or b.max_output
        why = (
            f"the window leaves {cap:,}; ZCODER_MAX_OUTPUT_TOKENS is {b.max_output:,}"
            if cap < b.max_output
            else "ZCODER_MAX_OUTPUT_TOKENS"
        )
        lines.append(f"Output cap: {cap:,} tokens ({why}): {OUTPUT_CAP_MEANS}")
    if b.measured_total is not None:
        lines.append(f"The server counted {b.measured_total:,} tokens for the last request.")
    if b.largest_outputs:
        lines.append("Largest recent tool outputs:")
        lines += [f"  {name.ljust(width)}{tokens:>8,}" for name, tokens in b.largest_outputs]
    if b.compact_at is None:
        automatic = "Automatic compaction is off (ZCODER_COMPACT_AT=off)."
    elif b.window:
        automatic = (
            f"Compacts by itself before a request past {round(100 * b.compact_at)}% of the "
            f"window, {int(b.window * b.compact_at):,} tokens (ZCODER_COMPACT_AT)."
        )
    else:
        automatic = f"Compacts by itself past {round(100 * b.compact_at)}% of the window."
    lines.append(automatic)
    lines.append("/compact [focus] replaces older history with a summary.")
    return "\n".join(lines)
