"""make bench's prompt overhead: what it counts, and the target row it fails above 2,000."""

from __future__ import annotations

import json

import pytest
from bench import prompt_overhead
from bench.relay_bench import Results

from zcoder.model.tokens import estimate_tokens
from zcoder.tools import Profile


def test_it_counts_the_system_prompt_and_the_schemas_of_a_user_turn() -> None:
    off = prompt_overhead.measure(Profile.CODING, relay=False)
    on = prompt_overhead.measure(Profile.CODING, relay=True)
    # Seven built-in tools and load_tools, whose catalog lists read_file_range and
    # apply_patch; the relay adds list_agents, send_agent_message.
    assert (off.tools, on.tools) == (8, 10)
    assert on.system_chars > off.system_chars  # and its guidance paragraph
    assert off.total == off.system_tokens + off.schema_tokens
    assert off.schema_tokens > off.system_tokens > 0


def test_the_target_row_is_the_largest_case_against_2000_tokens() -> None:
    results = Results()
    rows = prompt_overhead.run(results)
    [target] = results.targets
    largest = max(rows, key=lambda row: row.total)
    assert target.goal == "≤ 2,000 tokens"
    assert target.measured == f"{largest.total:,} tokens"
    assert target.met is (largest.total <= 2000)
    [table] = results.tables
    assert len(table.rows) == 4


def test_the_target_fails_over_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prompt_overhead, "PROMPT_BUDGET_TOKENS", 100)
    results = Results()
    prompt_overhead.run(results)
    assert results.targets[0].met is False
    assert results.targets[0].goal == "≤ 100 tokens"


def test_the_schema_count_is_the_estimate_of_the_json_sent() -> None:
    row = prompt_overhead.measure(Profile.SYSADMIN, relay=False)
    assert row.schema_tokens >= estimate_tokens(json.dumps([{"type": "function"}] * row.tools))
