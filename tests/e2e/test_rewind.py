"""Rewind and fork in the real program, keys as the bytes a terminal sends through tmux.

Three prompts each change a file; Escape Escape (two ESC bytes in one write, as a fast
double press arrives) on the empty prompt lists them, the second is chosen, and the
preview's ``b`` takes the conversation and the files back to before it. What was
written is read from the workspace, what the model was sent from the fake Ollama's
requests, what was saved from the session store; a --resume shows the rewound state.
Escape's other meanings stay: on a running turn it stops it, with a draft it keeps it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, start_in_tmux
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(150)

ESCAPE_TWICE = "1b 1b"
DOWN = "1b 5b 42"
DONE = ("first done", "second done", "third done")


def _write(path: str, content: str, done: str) -> tuple[Turn, Turn]:
    return Turn.tool_calls(call("write_file", {"path": path, "content": content})), Turn.text(done)


def _sessions(world: World, workspace: Path) -> list[str]:
    with SessionStore(world.home("proj")) as store:
        return [s.id for s in store.list_sessions(workspace, "coding") if s.title]


def _three_prompts(world: World, server: FakeOllama, size: tuple[int, int]) -> TmuxInstance:
    server.enqueue(
        *_write("a.txt", "one\n", "first done"),
        *_write("a.txt", "two\n", "second done"),
        *_write("b.txt", "three\n", "third done"),
    )
    (world.workspace("proj") / "a.txt").write_text("original\n")
    a = start_in_tmux(world, "proj", server, size=size)
    for prompt, done in zip(("first prompt", "second prompt", "third"), DONE, strict=True):
        a.submit_and_wait(prompt, done)
    return a


def test_escape_twice_rewinds_conversation_and_files_to_the_second_prompt(world: World) -> None:
    server = world.server(demo=False)
    a = _three_prompts(world, server, (140, 40))
    workspace = a.workspace
    assert (workspace / "b.txt").read_text() == "three\n"

    a.send_hex(ESCAPE_TWICE)
    a.wait_text("Rewind to before which prompt?")
    a.send_hex(DOWN)
    a.send_hex(ENTER)
    a.wait_text("Rewind to before “second prompt”?")
    a.wait_text("The conversation drops 2 prompts and 8 messages.")
    a.wait_text("a.txt  +1 −1  (restore)")
    a.wait_text("b.txt  +0 −1  (delete)")
    a.wait_text("[b] conversation and files")  # shown once the dialog takes answers
    a.send_key("b")
    a.wait_text("Rewound the conversation to before “second prompt”")
    assert (workspace / "a.txt").read_text() == "one\n"  # as the first prompt's turn left it
    assert not (workspace / "b.txt").exists()
    a.wait_gone("third done")

    # The prompt is back in the box: the user edits it and sends it.
    a.type_text(", edited")
    a.wait_text("second prompt, edited")
    server.enqueue(Turn.text("edited answered"))
    a.send_hex(ENTER)
    a.wait_text("edited answered")
    sent = server.chat_bodies[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "first prompt",
        "second prompt, edited",
    ]
    assert a.quit() == 0

    [session] = _sessions(world, workspace)
    with SessionStore(world.home("proj")) as store:
        saved = store.load(session, workspace, "coding")
    assert saved.user_ledger == ["first prompt", "second prompt, edited"]
    assert "third" not in {e.text for e in saved.events}
    b = start_in_tmux(world, "proj", server, args=("--resume", session), size=(140, 40))
    b.wait_text("edited answered")
    b.wait_text("first done")
    assert "second done" not in b.screen_text and "third done" not in b.screen_text


def test_escape_twice_on_a_running_turn_stops_it_and_with_a_draft_keeps_it(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("answered"), Turn.stall())
    a = start_in_tmux(world, "proj", server, size=(60, 15))
    a.submit_and_wait("first prompt", "answered")
    a.submit("stall please")
    wait_until(lambda: len(server.chat_bodies) >= 2, what="the second request")
    a.send_hex(ESCAPE_TWICE)
    a.wait_text("Stopped after")
    assert "Rewind to before" not in a.screen_text
    a.type_text("a draft")
    a.wait_text("a draft")
    a.send_hex(ESCAPE_TWICE)
    a.send_hex(ESCAPE_TWICE)
    a.wait_text("a draft")
    assert "Rewind to before" not in a.screen_text
    # Cleared, the same keys open the list, readable at 60x15; Escape closes it.
    a.send_hex("15")  # Ctrl+U: the draft goes
    a.wait_gone("a draft")
    a.send_hex(ESCAPE_TWICE)
    a.wait_text("Rewind to before which prompt?")
    a.wait_text("stall please  · the last")
    a.wait_text("first prompt  · 2 back")
    a.send_hex("1b")
    a.wait_gone("Rewind to before which prompt?")


def test_conversation_only_then_fork_opens_a_copy_and_leaves_the_session(world: World) -> None:
    server = world.server(demo=False)
    a = _three_prompts(world, server, (140, 40))
    [source] = _sessions(world, a.workspace)
    # The conversation only: back to before "third", its file stays.
    a.send_hex(ESCAPE_TWICE)
    a.wait_text("third  · the last")
    a.send_hex(ENTER)
    a.wait_text("[c] conversation only")
    a.send_key("c")
    a.wait_text("The files were kept as")
    assert (a.workspace / "b.txt").read_text() == "three\n"
    a.send_hex("15")  # Ctrl+U: the prompt put back goes
    a.submit_and_wait("/fork try another way", "Forked: this is")
    server.enqueue(Turn.text("in the fork"))
    a.submit_and_wait("only in the fork", "in the fork")
    assert a.quit() == 0
    with SessionStore(world.home("proj")) as store:
        kept = store.load(source, a.workspace, "coding")
        [fork] = [s for s in store.list_sessions(a.workspace, "coding") if s.id != source]
        forked = store.load(fork.id, a.workspace, "coding")
    assert kept.user_ledger == ["first prompt", "second prompt"]
    assert kept.events[-1].text.startswith("Rewound the conversation to before “third”")
    assert forked.info.title == "try another way"
    assert forked.user_ledger == [*kept.user_ledger, "only in the fork"]
    # --fork ID at start: another copy, opened with the saved conversation shown.
    b = start_in_tmux(world, "proj", server, args=("--fork", source), size=(140, 40))
    b.wait_text("Rewound the conversation to before “third”")
    b.wait_text("second done")
    assert "third done" not in b.screen_text
    assert len(_sessions(world, a.workspace)) == 3
