"""``zcoder --prompt`` and the model's plan, end to end: the real program in a subprocess,
the fake Ollama scripted to call update_plan, a private ZCODER_HOME. The plan is on stderr
as it changes and in ``--output-format json``'s object; a resumed run starts from it."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, make_env, sessions
from tests.test_oneshot_bounds import run

STEPS = [
    {"text": "read alpha", "status": "done"},
    {"text": "write the summary", "status": "in_progress"},
    {"text": "check it", "status": "pending"},
]


@pytest.fixture
def env(tmp_path) -> Env:
    return make_env(tmp_path)


def test_json_output_carries_the_final_plan_and_a_resumed_run_starts_from_it(
    env: Env, fake: FakeOllama
) -> None:
    two_at_once = [dict(step, status="in_progress") for step in STEPS]
    fake.enqueue(
        Turn.tool_calls(call("update_plan", {"items": two_at_once}, id="call_bad")),
        Turn.tool_calls(call("update_plan", {"items": STEPS}, id="call_good")),
        Turn.text("Planned."),
    )
    done = run(env, "--prompt", "summarise alpha", "--output-format", "json", server=fake)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["plan"] == STEPS
    bad, good = report["tool_calls"]
    assert bad["status"] == "failed" and "at most one may be" in bad["output"]
    assert good["status"] == "completed"
    assert good["output"] == "Plan updated: 1/3 done. In progress: write the summary"
    assert b"[plan] Plan 1/3 \xe2\x9c\x93 \xc2\xb7 now: write the summary" in done.stderr
    (data,) = sessions(env)
    assert data.state == {"plan": {"items": STEPS}}

    # Resumed: the model answers without touching the plan; the object still has it.
    fake.enqueue(Turn.text("Still on it."))
    again = run(env, "--prompt", "go on", "--resume", data.info.id, "--json", server=fake)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["plan"] == STEPS


def test_json_output_has_no_plan_when_the_model_kept_none(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.text("Hello."))
    done = run(env, "--prompt", "hi", "--json", server=fake)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["plan"] is None
