"""``@path`` in a prompt: found as a user means it, attached within the workspace only,
bounded, and the ledger keeps what the user typed while the model gets the file."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.agent.support import Harness
from tests.fixtures.fake_ollama import Turn
from zcoder.agent import Notice
from zcoder.agent.attachments import MAX_FILE_BYTES, MAX_TOTAL_BYTES, attach
from zcoder.agent.mentions import find_mentions


def typed_paths(text: str) -> list[str]:
    return [m.typed for m in find_mentions(text)]


# -- what counts as a mention -----------------------------------------------------------


def test_an_email_address_or_an_at_inside_a_word_is_not_a_mention() -> None:
    assert typed_paths("mail me@example.com or a@b, then x@y.z") == []


def test_mentions_at_the_start_after_blanks_and_brackets_are_found() -> None:
    assert typed_paths('@a.py then (@src/b.py) and "@c.md" and @"d e.txt"') == [
        "a.py",
        "src/b.py)",
        "c.md",
        "d e.txt",
    ]


def test_code_spans_and_fences_hold_no_mentions() -> None:
    text = "why does `@dataclass` fail here:\n```\n@dataclass\nclass A: ...\n```\nsee @a.py"
    assert typed_paths(text) == ["a.py"]


def test_closing_punctuation_is_offered_as_a_second_reading() -> None:
    (mention,) = find_mentions("look at @app.py.")
    assert mention.paths == ("app.py.", "app.py")


# -- what is attached --------------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "README.md").write_text("readme\n")
    return root.resolve()


def test_a_file_and_a_directory_are_attached_with_their_sizes(ws: Path) -> None:
    got = attach("explain @src/app.py, and @src.", ws, window=None)
    assert [item.shown() for item in got.items] == [
        "📎 src/app.py (26 bytes, 2 lines)",
        "📎 src/ (1 entry)",
    ]
    assert got.notices == []
    sent = got.prompt("explain @src/app.py, and @src.")
    assert sent.startswith("explain @src/app.py, and @src.\n\n")
    assert '<file path="src/app.py">\ndef main():\n    return 42\n</file>' in sent
    assert '<directory path="src">\nsrc/app.py\n</directory>' in sent


def test_a_missing_path_stays_as_typed_with_a_notice(ws: Path) -> None:
    got = attach("ask @alice about @nothing/here", ws, window=None)
    assert got.items == []
    assert got.prompt("ask @alice about @nothing/here") == "ask @alice about @nothing/here"
    assert got.notices == [
        "@alice was not attached: there is no such file in the workspace",
        "@nothing/here was not attached: there is no such file in the workspace",
    ]


# -- attacks: paths a hostile prompt or repository would use ---------------------------


@pytest.mark.parametrize(
    "mention", ["@../../etc/passwd", "@/etc/shadow", "@/etc/passwd", "@src/../../outside.txt"]
)
def test_paths_outside_the_workspace_are_refused(ws: Path, mention: str) -> None:
    (ws.parent / "outside.txt").write_text("SECRET-OUTSIDE\n")
    got = attach(f"show {mention}", ws, window=None)
    assert got.items == []
    assert got.notices == [f"{mention} was not attached: it is outside the workspace"]
    assert "SECRET" not in got.prompt(f"show {mention}")
    assert "root:" not in got.prompt(f"show {mention}")


def test_a_symlink_leading_out_of_the_workspace_is_refused(ws: Path) -> None:
    (ws.parent / "key").write_text("SECRET-KEY\n")
    (ws / "innocent.txt").symlink_to(ws.parent / "key")
    (ws / "dir").symlink_to(ws.parent)
    got = attach("read @innocent.txt and @dir/key and @dir", ws, window=None)
    assert got.items == []
    assert all("outside the workspace" in notice for notice in got.notices)
    assert len(got.notices) == 3


def test_a_fifo_a_socket_and_a_device_are_refused_without_hanging(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(ws / "sock"))
        got = attach("@pipe @sock", ws, window=None)
    assert got.items == []
    assert got.notices == [
        "@pipe was not attached: pipe is a named pipe (FIFO); zcoder reads only regular files",
        "@sock was not attached: sock is a socket; zcoder reads only regular files",
    ]


def test_a_binary_file_is_refused(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 10)
    got = attach("@blob.bin", ws, window=None)
    assert got.items == []
    assert got.notices == [
        "@blob.bin was not attached: blob.bin looks like a binary file; it was not read"
    ]


def test_a_huge_file_is_cut_at_a_line_and_said_so(ws: Path) -> None:
    line = "x" * 99 + "\n"
    (ws / "big.log").write_text(line * 5000)  # 500,000 bytes
    got = attach("@big.log", ws, window=None)
    (item,) = got.items
    assert item.cut and len(item.body.encode()) <= MAX_FILE_BYTES
    assert item.body.endswith("\n") and set(item.body.splitlines()) == {"x" * 99}
    assert item.shown() == f"📎 big.log (488.3 KiB, its first {len(item.body) // 100:,} lines)"
    assert got.notices == ["big.log was cut to fit the attachment limits"]
    assert 'cut="true"' in got.prompt("@big.log")


def test_all_attachments_together_stay_within_the_total(ws: Path) -> None:
    for n in range(4):
        (ws / f"f{n}.txt").write_text(("y" * 63 + "\n") * 1000)  # 64,000 bytes each
    got = attach("@f0.txt @f1.txt @f2.txt @f3.txt", ws, window=None)
    assert sum(len(item.body.encode()) for item in got.items) <= MAX_TOTAL_BYTES
    assert "@f3.txt was not attached: the prompt's attachments are at their limit" in got.notices


def test_on_a_small_window_attachments_take_at_most_half_of_it(ws: Path) -> None:
    (ws / "mid.txt").write_text("word " * 8000)  # about 8,000 tokens
    got = attach("@mid.txt", ws, window=8192)
    (item,) = got.items
    assert item.cut
    from zcoder.model.tokens import estimate_tokens

    assert estimate_tokens(item.body) <= 4096


# -- through the agent: the ledger keeps what was typed, the model gets the file --------


async def test_the_model_gets_the_file_and_the_ledger_keeps_the_typed_prompt(
    harness: Harness,
) -> None:
    harness.server.enqueue(Turn.text("It says beta."))
    await harness.agent.run_user_turn("what does @beta.py print?")
    sent = harness.bodies()[0]["messages"][-1]["content"]
    assert sent.startswith("what does @beta.py print?\n\n")
    assert "print('beta')" in sent
    assert harness.agent.user_ledger == ["what does @beta.py print?"]
    assert harness.load().user_ledger == ["what does @beta.py print?"]
    assert [n.text for n in harness.log.of(Notice)] == ["📎 beta.py (14 bytes, 1 line)"]


async def test_a_hostile_mention_reaches_neither_model_nor_ledger(
    harness: Harness, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("TOP-SECRET\n")
    harness.server.enqueue(Turn.text("ok"))
    await harness.agent.run_user_turn("summarise @../secret.txt")
    assert "TOP-SECRET" not in str(harness.bodies())
    assert [n.text for n in harness.log.of(Notice)] == [
        "@../secret.txt was not attached: it is outside the workspace"
    ]


@given(st.text(alphabet=st.sampled_from(list("ab@.`/ \n\"'(")), max_size=60))
def test_every_mention_starts_at_a_boundary_outside_code(text: str) -> None:
    for mention in find_mentions(text):
        assert text[mention.start] == "@"
        assert mention.start == 0 or text[mention.start - 1] in " \n(\"'[{<"
        assert all(mention.paths)
        quoted = text[mention.start + 1] in "\"'"
        # A bare path ends at the next "@"; a quoted one may hold it (packages/@scope/x.ts).
        assert quoted or all("@" not in path for path in mention.paths)
        before = text[: mention.start]
        assert before.count("```") % 2 == 0  # not inside a fence


@given(st.from_regex(r"[a-z0-9._%+-]{1,10}@[a-z0-9-]{1,10}\.[a-z]{2,4}", fullmatch=True))
def test_an_email_address_is_never_a_mention(address: str) -> None:
    assert find_mentions(f"write to {address} today") == []


def test_a_quoted_mention_may_name_a_path_holding_an_at_sign() -> None:
    [mention] = find_mentions('see @"packages/@scope/index.ts" now')
    assert mention.paths == ("packages/@scope/index.ts",)
    assert [m.paths for m in find_mentions("@'@'")] == [("@",)]
