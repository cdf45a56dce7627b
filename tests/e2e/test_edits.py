"""Edits in the real program in a pseudo-terminal: the diff on screen, /undo restoring the
original bytes, and ZCODER_EDITS=ask answered with the keys a terminal sends.

What was written is read from the workspace, what the model was told from the fake
Ollama's recorded requests; the screen only has to show the diff and the dialogs.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import World
from tests.fixtures.fake_ollama import Turn, call

pytestmark = pytest.mark.timeout(90)

ORIGINAL = "def area(r):\r\n    return 3.14 * r * r  # π, roughly\r\n".encode()


def test_the_diff_is_shown_and_undo_restores_the_original_bytes(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(
            call(
                "replace_text",
                {"path": "geometry.py", "old_text": "3.14 * r * r", "new_text": "math.pi * r**2"},
            ),
            call("write_file", {"path": "NOTES.md", "content": "uses math.pi now\n"}),
        ),
        Turn.text("Switched to math.pi."),
    )
    (world.workspace("proj") / "geometry.py").write_bytes(ORIGINAL)
    a = world.start("proj", server)

    mark = a.mark()
    a.submit("use math.pi")
    a.wait_text("Switched to math.pi.", since=mark)
    a.wait_text("-    return 3.14 * r * r  # π, roughly", since=mark)
    a.wait_text("+    return math.pi * r**2  # π, roughly", since=mark)
    a.wait_text("+uses math.pi now", since=mark)
    assert (a.workspace / "geometry.py").read_bytes() != ORIGINAL

    mark = a.mark()
    a.submit("/undo")
    a.wait_text('Undo the file changes of the turn "use math.pi"?', since=mark)
    a.wait_text("delete NOTES.md (the turn created it)", since=mark)
    a.wait_text("[y] undo", since=mark)  # shown once the dialog takes answers
    a.send_key("y")
    a.wait_text("Undid the file changes", since=mark)
    assert (a.workspace / "geometry.py").read_bytes() == ORIGINAL
    assert not (a.workspace / "NOTES.md").exists()

    # The journal is on disk: after a restart, /undo goes on with nothing left to undo.
    assert a.quit() == 0
    b = world.start("proj", server, args=("--resume", _only_session(world, "proj")))
    mark = b.mark()
    b.submit("/undo")
    b.wait_text("Nothing to undo", since=mark)


def test_ask_mode_n_then_y_with_terminal_keys(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("write_file", {"path": "a.txt", "content": "first\n"})),
        Turn.text("refused, fine"),
        Turn.tool_calls(call("write_file", {"path": "a.txt", "content": "second\n"})),
        Turn.text("second-write-done"),
    )
    a = world.start("asker", server, ZCODER_EDITS="ask")

    mark = a.mark()
    a.submit("write a")
    a.wait_text("Write this change?", since=mark)
    a.wait_text("+first", since=mark)
    a.wait_text("[n]/Esc refuse", since=mark)
    a.send_key("n")
    a.wait_text("refused, fine", since=mark)
    assert not (a.workspace / "a.txt").exists()
    told = [m for m in server.chat_bodies[1]["messages"] if m["role"] == "tool"]
    assert "the user refused this edit of a.txt" in told[-1]["content"]

    mark = a.mark()
    a.submit("write a again")
    a.wait_text("+second", since=mark)
    a.wait_text("[n]/Esc refuse", since=mark)
    a.send_key("y")
    a.wait_text("second-write-done", since=mark)
    assert (a.workspace / "a.txt").read_text() == "second\n"


def _only_session(world: World, name: str) -> str:
    from zcoder.sessions import SessionStore

    with SessionStore(world.home(name)) as store:
        [info] = [s for s in store.list_sessions(world.workspace(name), "coding") if s.title]
    return info.id
