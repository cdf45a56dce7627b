"""A rewind puts the plan and the goal back with the conversation (keys through tmux).

The model makes a plan on the first prompt and changes it on the second; a goal then
runs to its end. Going back to before the second prompt (Escape twice, the list, ``c``)
must not leave the sidebar showing the plan the dropped turn made, nor the header a goal
whose every turn was dropped: both are what they were before that prompt, on the
screen, in what is saved and after a --resume.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, start_in_tmux
from tests.fixtures.fake_ollama import Turn, call
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(150)

ESCAPE_TWICE = "1b 1b"
FIRST = [{"text": "read the code", "status": "in_progress"}]
SECOND = [
    {"text": "read the code", "status": "done"},
    {"text": "write the tests", "status": "in_progress"},
]


def conversation_only(a: TmuxInstance) -> None:
    """Answer the preview: the conversation goes back, the files stay."""
    a.wait_text("[c] conversation only")
    a.send_key("c")


def test_a_rewind_takes_back_the_plan_and_the_goal_the_dropped_turns_made(world: World) -> None:
    server = world.server(demo=False)
    for items, said in ((FIRST, "first planned"), (SECOND, "second planned")):
        server.enqueue(Turn.tool_calls(call("update_plan", {"items": items})), Turn.text(said))
    a = start_in_tmux(world, "proj", server, size=(140, 40))
    a.submit_and_wait("make a plan", "first planned")
    a.wait_text("Plan · 0/1 done")
    a.submit_and_wait("go on", "second planned")
    a.wait_text("Plan · 1/2 done")
    finish = {"status": "complete", "response": "goal work"}
    accept = {"verdict": "accept", "reasons": "fine"}
    server.enqueue(
        Turn.tool_calls(call("finish", finish)), Turn.tool_calls(call("verdict", accept))
    )
    a.submit_and_wait("/goal tidy the notes", "Goal done")
    wait_until(lambda: "goal done" in a.screen()[0], what="the goal in the header")

    a.send_hex(ESCAPE_TWICE)
    a.wait_text("go on  · the last")
    a.send_hex(ENTER)
    a.wait_text("The plan goes back too.")  # the preview says it all before the key
    a.wait_text("The goal set after it is dropped.")
    conversation_only(a)
    a.wait_text("The plan is what it was")
    a.wait_text("The goal set after it went too (tidy the notes)")
    a.wait_text("Plan · 0/1 done")
    assert "Plan · 1/2 done" not in a.screen_text
    wait_until(lambda: "goal" not in a.screen()[0], what="the goal gone from the header")

    a.send_hex("15")  # Ctrl+U: the prompt put back goes
    assert a.quit() == 0
    with SessionStore(world.home("proj")) as store:
        [info] = [s for s in store.list_sessions(a.workspace, "coding") if s.title]
        saved = store.load(info.id, a.workspace, "coding")
    assert saved.state.get("plan") == {"items": FIRST}
    assert saved.state.get("goal") is None
    b = start_in_tmux(world, "proj", server, args=("--resume", info.id), size=(140, 40))
    b.wait_text("Plan · 0/1 done")
    assert "goal" not in b.screen()[0]


def test_a_prompt_with_an_at_file_is_listed_to_go_back_to(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("read it"), Turn.text("last done"))
    (world.workspace("proj") / "a.txt").write_text("alpha\n")
    a = start_in_tmux(world, "proj", server, size=(60, 15))
    a.submit_and_wait("explain @a.txt please", "read it")
    a.submit_and_wait("last prompt", "last done")
    a.send_hex(ESCAPE_TWICE)
    a.wait_text("explain @a.txt please  · 2 back")
    assert "(files only)" not in a.screen_text  # it was, and so was every prompt before it
    a.send_hex("1b 5b 42", ENTER)  # Down, Enter
    conversation_only(a)
    a.wait_text("Rewound the conversation")
    a.wait_gone("read it")


def test_a_rewind_past_a_background_job_says_it_keeps_running(world: World) -> None:
    server = world.server(demo=False)
    serve = {"command": "python3 -m http.server 0 --bind 127.0.0.1", "background": True}
    server.enqueue(Turn.tool_calls(call("run_command", serve)), Turn.text("serving"))
    a = start_in_tmux(world, "proj", server, size=(140, 40))
    a.type_text("serve it")
    a.send_hex(ENTER)
    a.wait_text("[y] run this command")
    a.send_key("y")
    a.wait_text("serving")
    a.send_hex(ESCAPE_TWICE)
    a.wait_text("serve it  · the last")
    a.send_hex(ENTER)
    a.wait_text("1 background job started after it keeps running.")
    conversation_only(a)
    a.wait_text("Background job 1,")
    a.wait_text("keeps running (/jobs stop N ends one).")
    assert "1 job" in a.screen()[0]  # and it does
