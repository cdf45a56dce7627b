"""``@path`` and the instruction commands with the real zcoder in tmux, keys as a terminal
sends them: Tab (``09``) completes ``@sr`` to ``@src/`` and on to the file, Enter (``0d``)
sends; the transcript shows what was attached and its size, the model gets the file, a
hostile path is refused on screen; /instructions lists the files, /init asks in the edit
dialog before it writes AGENTS.md. At 60x15 and 140x40."""

from __future__ import annotations

import re

import pytest

from tests.e2e.harness import World
from tests.e2e.test_prompt_habits_e2e import wait_sent
from tests.e2e.tmux import ENTER, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TAB = "09"
PAGE_DOWN = "1b 5b 36 7e"
SIZES = pytest.mark.parametrize("size", [(60, 15), (140, 40)])
APP = "def main():\n    return 'APP-BODY'\n"


@SIZES
def test_tab_completes_an_at_path_and_the_file_goes_to_the_model(
    world: World, size: tuple[int, int]
) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("It returns APP-BODY."))
    (world.workspace("proj") / "src").mkdir()
    (world.workspace("proj") / "src" / "app.py").write_text(APP)
    zc = start_in_tmux(world, "proj", server, size=size, ZCODER_RELAY="off")

    zc.send_hex(to_hex("what is @sr") + f" {TAB} " + to_hex("ap") + f" {TAB} ")
    zc.wait_text("@src/app.py")
    zc.send_hex(to_hex("for?") + f" {ENTER}")
    (sent,) = wait_sent(server, 1)
    assert sent.startswith("what is @src/app.py for?\n\n")
    assert f'<file path="src/app.py">\n{APP}</file>' in sent
    zc.wait_text("📎 src/app.py (34 bytes, 2 lines)")
    zc.wait_text("It returns APP-BODY.")


def test_a_hostile_at_path_is_refused_on_screen_and_never_sent(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("ok"))
    (world.root / "secret.txt").write_text("TOP-SECRET\n")
    workspace = world.workspace("proj")
    (workspace / "link.txt").symlink_to(world.root / "secret.txt")
    zc = start_in_tmux(world, "proj", server, size=(140, 40), ZCODER_RELAY="off")
    zc.send_hex(to_hex("read @link.txt and @/etc/passwd") + f" {ENTER}")
    zc.wait_text("@link.txt was not attached: it is outside the workspace")
    zc.wait_text("@/etc/passwd was not attached: it is outside the workspace")
    (sent,) = wait_sent(server, 1)
    assert sent == "read @link.txt and @/etc/passwd"
    assert "TOP-SECRET" not in str(server.chat_bodies) and "root:" not in sent


@SIZES
def test_instructions_lists_and_init_asks_before_writing(
    world: World, size: tuple[int, int]
) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("```markdown\n# Agents\n\nRun the tests.\n```"))
    workspace = world.workspace("proj")
    (workspace / "CLAUDE.md").write_text("Use tabs.\n")
    zc = start_in_tmux(world, "proj", server, size=size, ZCODER_RELAY="off")

    zc.send_hex(to_hex("/instructions") + f" {ENTER}")
    zc.wait_text("CLAUDE.md (10 bytes)")
    zc.wait_text("-token window")
    mark = zc.mark()
    zc.send_hex(to_hex("/init") + f" {ENTER}")
    zc.wait_text("+# Agents", since=mark)
    zc.wait_text("[n]/Esc refuse", since=mark)  # the edit dialog
    assert not (workspace / "AGENTS.md").exists()
    zc.send_hex(PAGE_DOWN)  # a small terminal's dialog is read to its end before a yes
    zc.wait_text(re.compile(r"all (seen|shown)"), since=mark)
    zc.send_key("y")
    zc.wait_text("Wrote AGENTS.md", since=mark)
    assert (workspace / "AGENTS.md").read_text() == "# Agents\n\nRun the tests.\n"
