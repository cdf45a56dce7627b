"""Edits in the real program in a pseudo-terminal: the diff on screen, /undo restoring the
original bytes, and ZCODER_EDITS=ask answered with the keys a terminal sends.

What was written is read from the workspace, what the model was told from the fake
Ollama's recorded requests; the screen only has to show the diff and the dialogs.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import World
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.model_requests import tool_results

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

    a.submit_and_wait(
        "use math.pi",
        "Switched to math.pi.",
        "-    return 3.14 * r * r  # π, roughly",
        "+    return math.pi * r**2  # π, roughly",
        "+uses math.pi now",
    )
    assert (a.workspace / "geometry.py").read_bytes() != ORIGINAL

    mark = a.submit_and_wait(
        "/undo",
        'Undo the file changes of the turn "use math.pi"?',
        "delete NOTES.md (the turn created it)",
    )
    a.wait_text("[y] undo", since=mark)  # shown once the dialog takes answers
    a.send_key("y")
    a.wait_text("Undid the file changes", since=mark)
    assert (a.workspace / "geometry.py").read_bytes() == ORIGINAL
    assert not (a.workspace / "NOTES.md").exists()

    # The journal is on disk: after a restart, /undo goes on with nothing left to undo.
    assert a.quit() == 0
    b = world.start("proj", server, args=("--resume", _only_session(world, "proj")))
    b.submit_and_wait("/undo", "Nothing to undo")


def test_ask_mode_n_then_y_with_terminal_keys(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("write_file", {"path": "a.txt", "content": "first\n"})),
        Turn.text("refused, fine"),
        Turn.tool_calls(call("write_file", {"path": "a.txt", "content": "second\n"})),
        Turn.text("second-write-done"),
    )
    a = world.start("asker", server, ZCODER_EDITS="ask")

    mark = a.submit_and_wait("write a", "Write this change?", "+first", "[n]/Esc refuse")
    a.send_key("n")
    a.wait_text("refused, fine", since=mark)
    assert not (a.workspace / "a.txt").exists()
    assert "the user refused this edit of a.txt" in tool_results(server.chat_bodies[1])[-1]

    mark = a.submit_and_wait("write a again", "+second", "[n]/Esc refuse")
    a.send_key("y")
    a.wait_text("second-write-done", since=mark)
    assert (a.workspace / "a.txt").read_text() == "second\n"


def _only_session(world: World, name: str) -> str:
    from zcoder.sessions import SessionStore

    with SessionStore(world.home(name)) as store:
        [info] = [s for s in store.list_sessions(world.workspace(name), "coding") if s.title]
    return info.id
