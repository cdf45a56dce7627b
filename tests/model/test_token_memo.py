"""The context meter estimates the same history at every refresh; TokenMemo remembers each
text's estimate so only new texts are counted, and must give the plain estimate's total."""

from __future__ import annotations

from typing import Any

from zcoder.model.tokens import TokenMemo, estimate_request_tokens

TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]


def history(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"step {k}: run the tests"}
        if k % 2 == 0
        else {
            "role": "assistant",
            "content": "def f(x):\n    return x * 2\n" * k,
            "thinking": "the loader" if k % 3 == 0 else "",
            "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": f"{k}.py"}}}],
        }
        for k in range(n)
    ]


def test_the_memo_gives_the_plain_estimate_as_the_history_grows_and_changes() -> None:
    memo = TokenMemo()
    messages = history(30)
    assert memo.request(messages, TOOLS) == estimate_request_tokens(messages, TOOLS)
    assert memo.request(messages, TOOLS) == estimate_request_tokens(messages, TOOLS)
    messages.append({"role": "user", "content": "and now the docs " * 40})
    assert memo.request(messages, TOOLS) == estimate_request_tokens(messages, TOOLS)
    messages[3] = {"role": "assistant", "content": "compacted: a summary"}  # replaced
    assert memo.request(messages, TOOLS) == estimate_request_tokens(messages, TOOLS)
    assert memo.request(messages[:2]) == estimate_request_tokens(messages[:2])


def test_the_memo_keeps_only_the_texts_of_the_last_request() -> None:
    memo = TokenMemo()
    memo.request(history(40), TOOLS)
    memo.request(history(2))
    assert len(memo._counted) <= 2 * 3  # content, thinking and a call per message at most
