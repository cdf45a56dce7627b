"""The task tool with the real llama.cpp server and SmolLM2-135M, through ``zcoder
--prompt``: the model loads ``task`` from the catalog, calls it, a subagent runs in a
context of its own (its requests to the same real server, through the real template and
parser), and its report comes back as the call's result. Nothing in the workspace
changes: the subagent only reads.

As in tests/real/test_real_plan.py: a 135M model calls a tool when told to repeat the
call exactly, the tool offered on demand is loaded first, every run is ``--offline`` (the
catalog the rest of the real suite sees), and each step is tried up to TRIES times (what
the model writes at temperature 0 moves with what the server batches beside it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.real.conftest import RealServer
from tests.real.test_real_oneshot import json_run
from tests.real.test_real_plan import TRIES, repeat
from tests.test_oneshot import Env, make_env

pytestmark = pytest.mark.timeout(600)  # the lock on REAL_ROOT may wait for another worker

JOB: dict[str, object] = {"description": "read alpha", "prompt": "Say: alpha holds the answer"}
"""A job a 135M model ends in one request or few (told to read a file, it read it again
and again until the loop guard stopped it: minutes on one thread). A job that itself said
"Reply with exactly this..." was called 0 times in 4 on one thread: the model echoed the
tool result instead."""


@pytest.fixture
def env(real_root: Path) -> Env:
    return make_env(real_root)


def run(env: Env, server: RealServer, prompt: str, *flags: str) -> dict[str, Any]:
    return json_run(env, server, prompt, "--offline", *flags, ZCODER_MAX_OUTPUT_TOKENS="96")


def test_the_small_model_hands_a_job_to_a_subagent_and_gets_its_report(
    env: Env, tool_server: RealServer
) -> None:
    (env.workspace / "alpha.txt").write_text("alpha holds the answer\n")
    before = sorted(p.name for p in env.workspace.iterdir())
    # Each try starts a new session: a failed one's history (the model repeating the tool
    # result instead of calling) makes the same answer likelier on a resume of it.
    tasks: list[dict[str, Any]] = []
    load: dict[str, Any] = {}
    report: dict[str, Any] = {}
    for _ in range(TRIES):
        load = run(env, tool_server, repeat("load_tools", {"name": "task"}))
        loaded = [(c["name"], c["arguments"], c["status"]) for c in load["tool_calls"]]
        if loaded != [("load_tools", {"name": "task"}, "completed")]:
            continue
        report = run(env, tool_server, repeat("task", JOB), "--resume", load["session_id"])
        tasks = [c for c in report["tool_calls"] if c["name"] == "task"]
        if tasks:
            break
    assert tasks, (load, report)
    call = tasks[0]
    assert call["status"] == "completed", call
    # The report of a subagent that ran: its own requests counted, its trailer last.
    trailer = call["output"].rsplit("\n", 1)[-1]
    assert trailer.startswith("[subagent 'read alpha': "), call["output"]
    assert trailer.endswith(" tokens]") and "0 turns" not in trailer
    assert sorted(p.name for p in env.workspace.iterdir()) == before
    assert (env.workspace / "alpha.txt").read_text() == "alpha holds the answer\n"
