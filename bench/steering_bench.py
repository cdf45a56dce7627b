"""Steering a running turn (issue 29): from the Enter that sends a message to the model
request that carries it, while a tool call of known length runs.

The real ``zcoder`` (``--yes``) in a pseudo-terminal (bench/app_terminal.py). Each turn is
one ``run_command`` of ``sleep TOOL_SECONDS``, then a reply. During the command the
message is typed, then Enter is written at a random moment; the request after the
command's result must carry it. The fake model runs in this process, in a thread, and
stamps each request when its body has arrived (``_StampedOllama``).

What the command had left to run when Enter was written is read from the command
itself: it writes the wall-clock time it ends (``sleep 1; date +%s.%N``), and the
requests are stamped with the same clock, so the figure is the request's arrival less the
command's end: what the steer cost beyond waiting for the safe point. Turns with no steer
are timed the same way, as the baseline: what a tool call's result costs anyway (the
result read, the history saved, the next request built).

``python -m bench.steering_bench [--quick]`` runs this section alone and prints it.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Mapping
from typing import Any

from bench.app_terminal import AppTerminal, app_env, zcoder_argv
from bench.harness import ms, workspace
from bench.relay_bench import Results, Table, Target

TOOL_SECONDS = 1.0
GOAL = 0.150  # p95 of (Enter → the request) − what the command had left to run
START_TIMEOUT = 30.0
IDLE_HINT = "Enter send"
RELAY_READY = "relay: ready"
MESSAGE = "please use the staging database"


def _fake_model() -> Any:
    """The fake Ollama in this process, stamping each request's arrival."""
    from tests.fixtures.fake_ollama import FakeOllama

    class _StampedOllama(FakeOllama):
        def __init__(self) -> None:
            super().__init__(demo=False)
            self.arrivals: list[tuple[float, Mapping[str, Any]]] = []

        def _add_request(self, record: Any) -> None:
            body = record.body
            chat = record.path == "/api/chat" and isinstance(body, dict)
            if chat and any(m.get("role") == "user" for m in body.get("messages") or ()):
                self.arrivals.append((time.time(), body))  # the command's clock
            super()._add_request(record)

    return _StampedOllama().start()


def _wait(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.002)
    return value


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, -(-int(q * 100) * len(ordered) // 100) - 1)]


def measure(reps: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """``reps`` steered turns and ``reps`` plain ones: each steered turn's overhead over the
    command's remaining time, its Enter → request time and that remaining time, and each
    plain turn's overhead (its next request less its command's end)."""
    from tests.fixtures.fake_ollama import Turn, call

    steered: list[float] = []
    latency: list[float] = []
    remaining: list[float] = []
    plain: list[float] = []
    rng = random.Random(29)
    server = _fake_model()
    try:
        with workspace("zs") as space:
            term = AppTerminal(
                zcoder_argv("--yes"), space.project("proj"), app_env(space, server.url)
            )
            try:
                term.wait_text(IDLE_HINT, RELAY_READY, timeout=START_TIMEOUT)
                for n in range(2 * reps):
                    steer = n % 2 == 0
                    ended = space.root / f"ended-{n}"
                    command = {"command": f"sleep {TOOL_SECONDS:g}; date +%s.%N > {ended}"}
                    server.enqueue(
                        Turn.tool_calls(call("run_command", command)), Turn.text(f"done {n}")
                    )
                    before = len(server.arrivals)
                    term.send(f"step {n}".encode())
                    time.sleep(0.15)  # typed, then Enter: not a paste
                    term.send(b"\r")
                    first = _wait(
                        lambda b=before: len(server.arrivals) > b, 10.0, "the turn's request"
                    )
                    assert first
                    asked = server.arrivals[before][0]
                    if steer:
                        term.send(MESSAGE.encode())
                        enter_at = asked + rng.uniform(0.3, 0.8) * TOOL_SECONDS
                        time.sleep(max(0.0, enter_at - time.time()))
                        sent = time.time()
                        term.send(b"\r")
                    _wait(lambda b=before: len(server.arrivals) > b + 1, 10.0, "the next request")
                    arrived, body = server.arrivals[before + 1]
                    overhead = arrived - float(ended.read_text(encoding="utf-8"))
                    if steer:
                        last = body["messages"][-1]
                        if last != {"role": "user", "content": MESSAGE}:
                            raise RuntimeError(f"the steer was not in the next request: {last}")
                        steered.append(overhead)
                        latency.append(arrived - sent)
                        remaining.append(float(ended.read_text(encoding="utf-8")) - sent)
                    else:
                        plain.append(overhead)
                    term.wait_text(f"done {n}", IDLE_HINT, timeout=10.0)
            finally:
                term.close()
    finally:
        server.stop()
    return steered, latency, remaining, plain


def run(results: Results, *, quick: bool) -> None:
    reps = 3 if quick else 20
    steered, latency, remaining, plain = measure(reps)
    table = Table(
        f"Steering a running turn (a {TOOL_SECONDS:g} s command; Enter 30-80 % into it)",
        ["measure", "n", "median", "p95", "max"],
    )
    rows = [
        ("Enter → the next request carries the message", latency),
        ("the command's remaining time at Enter", remaining),
        ("steered: Enter → request, less the remaining time", steered),
        ("no steer: the command's end → the next request", plain),
    ]
    for label, samples in rows:
        table.rows.append(
            [label, str(len(samples)), ms(sorted(samples)[len(samples) // 2]),
             ms(_percentile(samples, 0.95)), ms(max(samples))]
        )  # fmt: skip
    table.notes.append(
        "The command writes the time it ends; requests are stamped on arrival with the same "
        "clock. The baseline row is the same turn with no message: what a tool call's result "
        "costs anyway before the next request."
    )
    results.tables.append(table)
    p95 = _percentile(steered, 0.95)
    results.targets.append(
        Target(
            "steering: Enter → next model request (p95), over the tool's remaining time",
            "≤ 150 ms",
            f"{ms(p95)} (median {ms(sorted(steered)[len(steered) // 2])}, n {len(steered)})",
            p95 <= GOAL,
        )
    )


if __name__ == "__main__":
    from bench.report import print_results

    found = Results()
    run(found, quick="--quick" in sys.argv)
    print_results(found)
