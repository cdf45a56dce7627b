"""make bench's speed of the whole program: how it reads the screen, the tree it searches,
and the session it resumes (the figures themselves are the bench's, never asserted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyte
from bench import app_bench

from zcoder.sessions import SessionStore


class FakeTerminal:
    """Just the screen of an AppTerminal, fed with what zcoder would draw."""

    def __init__(self, rows: list[str]) -> None:
        self.screen = pyte.Screen(60, len(rows))
        stream = pyte.Stream(self.screen)
        stream.feed("\r\n".join(rows))

    def display(self) -> list[str]:
        return list(self.screen.display)


def test_the_prompt_row_is_read_between_the_borders_of_the_box_with_the_hint() -> None:
    hint = f"▁ {app_bench.HINT} · Shift+Enter new line "
    width = len(hint) + 10
    rows = [
        "│ Step 00012: the parser reads. Enter send is quoted here".ljust(width + 2) + "│",
        "│▊" + "▔" * width + "▎",
        "│▊" + " qwer".ljust(width) + "▎",
        "│▊" + hint.ljust(width, "▁") + "▎",
        " ^q Quit",
    ]
    assert app_bench.prompt_text(FakeTerminal(rows)) == "qwer"  # type: ignore[arg-type]
    round_box = ["╭──────────────╮", "│ abc          │", f"╰ {app_bench.HINT} ─╯"]
    assert app_bench.prompt_text(FakeTerminal(round_box)) == "abc"  # type: ignore[arg-type]
    assert app_bench.prompt_text(FakeTerminal(["no prompt", "here"])) is None  # type: ignore[arg-type]
    # While a turn runs (the keystroke bench types during a reply) the hint offers steering.
    bottom = f"╰ {app_bench.BUSY_HINT} · Ctrl+G queue ─╯"
    busy = ["╭" + "─" * (len(bottom) - 2) + "╮", "│ abc".ljust(len(bottom) - 1) + "│", bottom]
    assert app_bench.prompt_text(FakeTerminal(busy)) == "abc"  # type: ignore[arg-type]


def test_the_search_tree_is_deterministic_with_ignored_output(tmp_path: Path) -> None:
    trees = []
    for name in ("a", "b"):
        root = tmp_path / name
        root.mkdir()
        count, size = app_bench.make_tree(root, 1300)
        assert count == 1300 and size > 1300 * 1000
        files = sorted(p for p in root.rglob("*.py") if ".git" not in p.parts)
        trees.append({p.relative_to(root): p.read_text() for p in files})
    assert trees[0] == trees[1]
    paths = list(trees[0])
    assert sum(1 for p in paths if p.parts[0] == "build") == 200
    assert ".gitignore" in {p.name for p in (tmp_path / "a").iterdir()}
    rare = [p for p, text in trees[0].items() if app_bench.RARE in text]
    assert len([p for p in rare if p.parts[0] != "build"]) == 1


def test_the_resumed_session_has_the_events_asked_for_and_ends_with_the_marker(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    session = app_bench.fill_session(tmp_path / "home", project, 55)
    with SessionStore(tmp_path / "home") as store:
        data = store.load(session, project, "coding")
    assert len(data.events) == 55
    assert data.events[-1].role == "assistant" and data.events[-1].text == app_bench.RESUME_MARKER
    roles: dict[str, Any] = {}
    for event in data.events:
        roles[event.role] = roles.get(event.role, 0) + 1
    assert set(roles) == {"user", "assistant", "tool"}
    assert len(data.messages) == 55


def test_nearest_rank_percentiles() -> None:
    figures = app_bench.spread([float(n) for n in range(1, 101)])
    assert (figures.median, figures.p90, figures.p99, figures.count) == (50.5, 90.0, 99.0, 100)
    one = app_bench.spread([3.0])
    assert (one.median, one.p90, one.p99) == (3.0, 3.0, 3.0)
