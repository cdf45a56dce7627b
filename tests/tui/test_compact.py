"""/compact and /context in the real app; a compacted session reopened goes on from the summary."""

from __future__ import annotations

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.tui.conftest import converse, entries, idle, submit, transcript_text, wait_until

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


async def test_compact_then_resume_goes_on_from_the_summary(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await converse(pilot, app, fake, "one", "two", "three")
        fake.enqueue(Turn.text("SUMMARY: the user asked three things."))
        await submit(pilot, app, "/compact")
        await wait_until(pilot, lambda: "Compacted:" in transcript_text(app))
        await idle(pilot, app)
        assert "→" in transcript_text(app)
        await submit(pilot, app, "/context")
        await wait_until(pilot, lambda: "tool schemas" in transcript_text(app))
        assert app.header_state.context is not None
        session = app.session_id
    app2 = app_factory(make_config(), resume=session)
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # The user's transcript is whole; the model's history starts with the summary.
        users = [e.plain for e in entries(app2, "user")]
        assert [u.splitlines()[-1] for u in users] == [
            "request one",
            "request two",
            "request three",
        ]
        assert app2.agent is not None
        assert app2.agent.messages[0]["content"].startswith("<conversation_summary>")
        fake.enqueue(Turn.text("continuing"))
        await submit(pilot, app2, "go on")
        await idle(pilot, app2)
    sent = fake.chat_bodies[-1]["messages"]
    assert "SUMMARY: the user asked three things." in sent[1]["content"]
    assert sent[-1]["content"] == "go on"


async def test_compact_with_nothing_to_compact_says_so(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/compact")
        await wait_until(pilot, lambda: "Nothing compacted" in transcript_text(app))
        await idle(pilot, app)
    # No summary was asked of the model.
    assert not any(
        "compacting the history" in str(b["messages"][0].get("content", ""))
        for b in fake.chat_bodies
        if b["messages"]
    )


async def test_context_says_what_free_is_and_what_the_output_cap_takes_of_it(
    fake, make_config, app_factory
):
    # "free" stood beside "Output cap" with nothing to say how they relate.
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await converse(pilot, app, fake, "one")
        await submit(pilot, app, "/context")
        await wait_until(pilot, lambda: "Output cap" in transcript_text(app))
        lines = entries(app, "system")[-1].plain.splitlines()
        [free] = [line for line in lines if line.lstrip().startswith("free ")]
        assert free.endswith("(left in the window: room for the reply, then for more history)")
        [cap] = [line for line in lines if line.startswith("Output cap: ")]
        assert cap.startswith("Output cap: 8,192 tokens (ZCODER_MAX_OUTPUT_TOKENS): ")
        assert cap.endswith(
            "the most one reply may take of the free tokens; what it writes joins the history."
        )


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ({}, "Compacts by itself before a request past 85% of the window"),
        ({"ZCODER_COMPACT_PERCENT": "60"}, "Compacts by itself before a request past 60%"),
        ({"ZCODER_COMPACT_AT": "off"}, "Automatic compaction is off (ZCODER_COMPACT_AT=off)."),
    ],
)
async def test_context_says_when_the_history_compacts_by_itself(
    fake, make_config, app_factory, setting, said
):
    app = app_factory(make_config(env={"ZCODER_RELAY": "off", **setting}))
    async with app.run_test(size=SIZE) as pilot:
        await converse(pilot, app, fake, "one")
        await submit(pilot, app, "/context")
        await wait_until(pilot, lambda: "Output cap" in transcript_text(app))
        assert said in entries(app, "system")[-1].plain.replace("\n", " ")
