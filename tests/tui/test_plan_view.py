"""The plan's text on screen: what a prompt-injected model writes into a step (escape
sequences, a carriage return, bidi controls) is shown as visible escapes, never sent to
the terminal, in the sidebar's checklist, the one-line entry and the ACP plan update."""

from __future__ import annotations

from zcoder.acp.updates import plan_update
from zcoder.tools.plan import Plan
from zcoder.tui.widgets.plan_view import SIDEBAR_STEPS, plan_text

HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07fix\rthe bug\u202e"


def test_a_hostile_step_is_shown_escaped_everywhere() -> None:
    plan = Plan.from_arguments(
        [{"text": HOSTILE, "status": "in_progress"}, {"text": "ok", "status": "pending"}]
    )
    shown = [plan_text(plan).plain, plan.one_line(), plan_update(plan).entries[0].content]
    for text in shown:
        assert not any(ch in text for ch in "\x1b\x07\r\u202e"), repr(text)
        assert "fix" in text
    # Kept as the model sent it, its blanks made one space (a step is one line).
    assert plan.items[0].text == "\x1b]52;c;cm0gLXJmIH4=\x07fix the bug\u202e"


def test_a_long_plan_in_the_sidebar_folds_its_done_steps_into_one_line() -> None:
    steps = [{"text": f"step {n}", "status": "done"} for n in range(SIDEBAR_STEPS)]
    steps += [{"text": "now this", "status": "in_progress"}, {"text": "then", "status": "pending"}]
    plan = Plan.from_arguments(steps)
    assert plan_text(plan, fold_done=True).plain == "✓ 8 done\n▸ now this\n○ then"
    assert plan_text(plan).plain.count("✓ step") == SIDEBAR_STEPS  # the transcript: all
