"""The real model: how much of each request a llama.cpp server finds in its prompt cache.

A local model spends most of a turn's wait reading the prompt. llama.cpp (and Ollama) keep
the previous request's tokens and read only what is new, but only while the request begins
with the same tokens. This runs a ten-turn session of zcoder's own Agent (tool calls
included) against a real llama.cpp server (the embedded one, ``zcoder --gguf``) running
SmolLM2-135M, through a proxy that records what the server reports for each request
(zcoder is not changed to be measured: bench/recording_proxy.py). The same session runs
twice: with the server's cache, and with it defeated (``cache_prompt: false``), so the
time to first token of each turn shows what reuse saves. Then a compaction, and the turn
after it.

The physical limit is reading only what is new: each request's evaluated tokens against
the tokens it added to the previous request's prompt.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from bench.recording_proxy import Recorded, RecordingProxy
from bench.relay_bench import Results, Table, Target
from zcoder.agent import Agent, AgentSettings
from zcoder.model import OpenAIClient
from zcoder.model.embedded import (
    LaunchPlan,
    demo_gguf,
    machine_threads,
    start_embedded,
    tools_template,
)
from zcoder.tools import ApprovalPolicy, Approver, CommandPolicy, Profile, default_registry

WINDOW = 8192
MAX_OUTPUT = 48  # tokens a reply may take: the cache is about the prompt, not the reply
TURNS = 10
FIRST_REQUEST_GOAL = 0.90  # of the first request's prompt found in the cache after warm-up


@dataclass
class SessionRun:
    """One run of the session: every request, and where each user turn began."""

    warm_up: Recorded | None
    requests: list[Recorded]
    turn_starts: list[int]  # index in ``requests`` of each user turn's first request
    tool_calls: int
    compaction: list[Recorded]
    after_compaction: list[Recorded]


def _progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


def _ask_for(n: int) -> str:
    """A turn that asks for one file. A 135M model follows an exact instruction to write a
    call (the Hermes form zcoder's template teaches it), and the server turns that into a
    real streamed tool call; the turn then answers with what the file holds."""
    call = json.dumps({"name": "read_file", "arguments": {"path": f"notes/note-{n:02d}.txt"}})
    return f"Reply with exactly this and nothing else: <tool_call>{call}</tool_call>"


def _workspace(root: Path) -> Path:
    workspace = root / "project"
    (workspace / "notes").mkdir(parents=True)
    for n in range(1, TURNS + 1):
        (workspace / "notes" / f"note-{n:02d}.txt").write_text(
            f"Note {n}: the build for release {n}.0 passed on the first try.\n"
        )
    return workspace


async def _session(base_url: str, workspace: Path, model: str, proxy: RecordingProxy) -> SessionRun:
    client = OpenAIClient(base_url, read_timeout=600)
    async with client:
        settings = AgentSettings(
            model=model,
            workspace=workspace,
            profile=Profile.CODING,
            num_predict=MAX_OUTPUT,
            num_ctx=WINDOW,
            compact_at=None,  # compaction is measured on its own, at the end
            retry_delay=0,
        )
        agent = Agent(
            client=client,
            registry=default_registry(),
            settings=settings,
            approval=ApprovalPolicy(CommandPolicy.ALLOW, Profile.CODING),
            approver=cast(Approver, None),
            on_event=lambda _event: None,
        )
        messages, tools = agent.user_turn_request()
        await client.warm_up(model, messages[:1], tools=tools or None, num_ctx=WINDOW)
        warm = proxy.take()
        starts: list[int] = []
        requests: list[Recorded] = []
        for n in range(1, TURNS + 1):
            starts.append(len(requests))
            await agent.run_user_turn(_ask_for(n))
            requests += proxy.take()
            _progress(f"turn {n}: {len(requests)} requests so far")
        calls = sum(
            len(m.get("tool_calls") or []) for m in agent.messages if m["role"] == "assistant"
        )
        await agent.keeper.compact()
        compaction = proxy.take()
        await agent.run_user_turn(_ask_for(1))
        after = proxy.take()
    return SessionRun(warm[-1] if warm else None, requests, starts, calls, compaction, after)


def _run_session(base_url: str, key: str, model: str, *, defeat: bool) -> SessionRun:
    with tempfile.TemporaryDirectory(prefix="zb-real-") as root:
        workspace = _workspace(Path(root))
        with RecordingProxy(base_url, defeat_cache=defeat, key=key) as proxy:
            return asyncio.run(_session(proxy.base_url, workspace, model, proxy))


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "—"


def _ms(seconds: float | None) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds is not None else "—"


def run(results: Results) -> None:
    """Start the real server, run the session with and without the cache, report."""
    with tempfile.TemporaryDirectory(prefix="zb-llama-") as logs:
        plan = LaunchPlan(
            model=demo_gguf(),
            n_ctx=WINDOW,
            threads=machine_threads(),
            alias="smollm2",
            template=tools_template(),
            seed=42,
            temperature=0.0,
            n_predict=MAX_OUTPUT,
        )
        with start_embedded(plan, log_path=Path(logs) / "server.log", timeout=180) as server:
            root_url = server.url
            _progress("real model: the session with the prompt cache")
            cached = _run_session(root_url, server.key, plan.alias, defeat=False)
            _progress("real model: the same session with the cache defeated")
            defeated = _run_session(root_url, server.key, plan.alias, defeat=True)
    _report(results, cached, defeated)


def _report(results: Results, cached: SessionRun, defeated: SessionRun) -> None:
    per_request = Table(
        "Real model: each request of a ten-turn session (SmolLM2-135M on llama.cpp)",
        ["request", "prompt tokens", "added", "read (evaluated)", "found in cache", "reuse"],
    )
    previous = cached.warm_up.prompt_tokens if cached.warm_up is not None else 0
    whole_found = 0
    for n, record in enumerate(cached.requests, start=1):
        added = record.prompt_tokens - previous
        found_all = record.cached >= previous
        whole_found += found_all and n > 1
        per_request.rows.append(
            [
                f"{n}" + (" (turn)" if n - 1 in cached.turn_starts else ""),
                f"{record.prompt_tokens:,}",
                f"{added:+,}",
                f"{record.evaluated:,}",
                f"{record.cached:,}",
                _share(min(record.cached, previous), previous) if previous else "—",
            ]
        )
        previous = record.prompt_tokens
    per_request.notes.append(
        "added: this request's prompt minus the previous one's (what a server must read at "
        "least); reuse: the share of the previous request's prompt found in the cache (the "
        "previous reply's tokens are found too, so a request may find more than that). "
        f"Tool calls in the session: {cached.tool_calls}."
    )
    results.tables.append(per_request)

    first = cached.requests[0] if cached.requests else None
    first_share = first.cached / first.prompt_tokens if first and first.prompt_tokens else 0.0
    results.targets.append(
        Target(
            "real model: first request after the warm-up, prompt found in the cache",
            f"≥ {FIRST_REQUEST_GOAL:.0%}",
            f"{first_share:.0%} ({first.cached if first else 0:,} of "
            f"{first.prompt_tokens if first else 0:,} tokens)",
            first_share >= FIRST_REQUEST_GOAL,
        )
    )
    later = max(0, len(cached.requests) - 1)
    results.targets.append(
        Target(
            "real model: requests that find the previous request's whole prompt in the cache",
            "all",
            f"{whole_found} of {later}",
            later > 0 and whole_found == later,
        )
    )
    read = sum(r.evaluated for r in cached.requests[1:])
    added_total = (
        cached.requests[-1].prompt_tokens - cached.requests[0].prompt_tokens
        if cached.requests
        else 0
    )
    time_table = Table(
        "Real model: time to first token of each turn, with the prompt cache and without",
        ["measure", "with the cache", "cache defeated", "ratio"],
    )
    with_cache = _first_tokens(cached)
    without = _first_tokens(defeated)
    time_table.rows.append(
        [
            f"first token, median of {len(with_cache)} turns",
            _ms(statistics.median(with_cache) if with_cache else None),
            _ms(statistics.median(without) if without else None),
            f"{statistics.median(without) / statistics.median(with_cache):.1f}× faster"
            if with_cache and without
            else "—",
        ]
    )
    time_table.rows.append(
        [
            "prompt tokens read after the first request",
            f"{read:,} (added: {added_total:,})",
            f"{sum(r.evaluated for r in defeated.requests[1:]):,}",
            "—",
        ]
    )
    compaction = cached.compaction[-1] if cached.compaction else None
    after = cached.after_compaction[0] if cached.after_compaction else None
    time_table.rows.append(
        [
            "compaction: the summary request",
            f"{compaction.evaluated if compaction else 0:,} tokens read, "
            f"{_ms(compaction.total_s if compaction else None)}",
            "—",
            "—",
        ]
    )
    time_table.rows.append(
        [
            "the request after compaction",
            f"{after.cached if after else 0:,} of {after.prompt_tokens if after else 0:,} "
            f"found; first token {_ms(after.first_token_s if after else None)}",
            "—",
            "—",
        ]
    )
    time_table.notes.append(
        "Both sessions run the same zcoder code against the same server and model (temperature "
        "0, fixed seed); 'defeated' adds cache_prompt false to every request at the proxy. "
        "After a compaction the history is new, so the server reads it again."
    )
    results.tables.append(time_table)


def _first_tokens(run: SessionRun) -> list[float]:
    found = []
    for index in run.turn_starts:
        if index < len(run.requests) and run.requests[index].first_token_s is not None:
            found.append(cast(float, run.requests[index].first_token_s))
    return found


def main(argv: list[str] | None = None) -> int:
    from bench.report import markdown_table, targets_table

    results = Results()
    run(results)
    print(markdown_table(targets_table(results.targets)))
    for table in results.tables:
        print(markdown_table(table))
    return 0 if all(t.met for t in results.targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
