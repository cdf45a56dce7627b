"""Entry point of ``make bench``: measure the prompt overhead, run every relay benchmark and
the speed of the whole program (bench/app_bench.py), print the tables, write the doc.

``python -m bench --guard`` measures only the sysadmin guard on its corpus (seconds) and
rewrites only its section of docs/performance.md. ``python -m bench --quick`` runs far
fewer repetitions (a smoke run; it still rewrites
docs/performance.md, marked as quick). ``python -m bench --prompt-overhead`` prints only the
prompt overhead (the tokens of the system prompt and tool schemas; instant) and writes
nothing. ``python -m bench --board`` prints only the task board's figures (seconds).
``python -m bench --shared-model`` runs only three ``--gguf`` instances on one model
(bench/shared_model_bench.py) and writes nothing.
"""

from __future__ import annotations

import argparse
import sys
import time

from bench import (
    app_bench,
    attention,
    board_bench,
    enqueue_floor,
    fail_closed,
    guard,
    interactive_relay,
    notify_bench,
    prompt_overhead,
    real_model,
    relay_bench,
    report,
    shared_model_bench,
)
from bench.harness import workspace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke run)")
    parser.add_argument("--no-write", action="store_true", help="do not rewrite the doc")
    parser.add_argument(
        "--prompt-overhead",
        action="store_true",
        help="only the prompt overhead (system prompt + tool schemas); writes nothing",
    )
    parser.add_argument(
        "--attention",
        action="store_true",
        help="only the approval-to-watch latency (a few seconds); writes nothing",
    )
    parser.add_argument(
        "--board",
        action="store_true",
        help="only the task board's time to free a killed claimant's task; writes nothing",
    )
    parser.add_argument(
        "--guard",
        action="store_true",
        help="only the sysadmin guard's corpus figures; rewrites only their section",
    )
    parser.add_argument(
        "--shared-model",
        action="store_true",
        help="only one model for many agents (three --gguf instances; minutes); writes nothing",
    )
    args = parser.parse_args(argv)
    if args.shared_model:
        only = relay_bench.Results()
        shared_model_bench.run(only)
        print(report.markdown_table(report.targets_table(only.targets)))
        for table in only.tables:
            print(report.markdown_table(table))
        return 0 if all(target.met for target in only.targets) else 1
    if args.guard:
        section, met = guard_section()
        print(section)
        if not args.no_write:
            print(f"wrote {report.write_guard_section(section)}", file=sys.stderr)
        return 0 if met else 1
    if args.attention:
        only = relay_bench.Results()
        attention.run(only, 30)
        print(report.markdown_table(report.targets_table(only.targets)))
        print(report.markdown_table(only.tables[0]))
        return 0 if all(target.met for target in only.targets) else 1
    if args.prompt_overhead or args.board:
        only = relay_bench.Results()
        (board_bench.run if args.board else prompt_overhead.run)(only)
        print(report.markdown_table(report.targets_table(only.targets)))
        print(report.markdown_table(only.tables[0]))
        return 0 if all(target.met for target in only.targets) else 1
    quick: bool = args.quick
    scale = 10 if quick else 1

    started = time.monotonic()
    results = relay_bench.Results()
    few = 5 if quick else 1  # discovery and process spawns are the slow repetitions
    steps = [
        ("prompt overhead", lambda: prompt_overhead.run(results)),
        ("round trips", lambda: relay_bench.round_trips(results, 2000 // scale)),
        (
            "enqueue against its floor",
            lambda: enqueue_floor.run(results, 2000 // scale, 200 // scale),
        ),
        ("interactive ping", lambda: interactive_relay.run(results, 2000 // scale)),
        ("discovery", lambda: relay_bench.discovery(results, (1, 16, 64, 127), 30 // few)),
        ("attention", lambda: attention.run(results, 30 // few)),
        ("throughput", lambda: relay_bench.throughput(results, 2000 // scale)),
        ("stalled connections", lambda: relay_bench.stalled(results, 400 // scale)),
        ("start and stop", lambda: relay_bench.start_stop(results, 100 // scale, 10 // few)),
        ("resources", lambda: relay_bench.resources(results, 10000 // scale)),
        ("notify when idle", lambda: notify_bench.run(results, 40 // scale, 10 // few)),
        ("task board", lambda: board_bench.run(results, 20 // few)),
        ("the real model's prompt cache", lambda: real_model.run(results)),
        ("one model for many agents", lambda: shared_model_bench.run(results)),
    ]
    for name, step in steps:
        print(f"running: {name}", file=sys.stderr, flush=True)
        step()
    per_kind = 200 // scale
    print("running: fail-closed counts", file=sys.stderr, flush=True)
    with workspace() as space:
        counts = fail_closed.run(space, per_kind)
    fail_table = report.fail_closed_table(counts, per_kind)
    print("running: guard corpus", file=sys.stderr, flush=True)
    guard_text, _ = guard_section()
    print("running: speed of the whole program", file=sys.stderr, flush=True)
    app = relay_bench.Results()
    app_bench.run(app, quick=quick)
    results.targets.extend(app.targets)
    elapsed = time.monotonic() - started

    print(report.markdown_table(report.targets_table(results.targets)))
    for table in results.tables:
        print(report.markdown_table(table))
    print(report.markdown_table(fail_table))
    print(guard_text)
    app_text = report.app_section(app.tables)
    print(app_text)
    if not args.no_write:
        text = report.render(
            results,
            relay_bench.machine(),
            fail_table,
            elapsed,
            quick,
            guard=guard_text,
            app=app_text,
        )
        print(f"wrote {report.write(text)}", file=sys.stderr)
    return 0


def guard_section() -> tuple[str, bool]:
    """The guard's section of the doc, and whether its targets are met."""
    figures = guard.run()
    targets = guard.targets(figures)
    section = report.guard_section(targets, guard.tables(figures))
    return section, all(target.met for target in targets)


if __name__ == "__main__":
    raise SystemExit(main())
