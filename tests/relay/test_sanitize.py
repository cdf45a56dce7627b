"""Peer text before it reaches a model: invisible characters escaped, control tokens defused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures.hostile_text import ALL_TOKENS, INVISIBLES, TOKENS, hostile, smuggled
from zcoder.relay.sanitize import (
    ELLIPSIS,
    body_for_model,
    bounded,
    defuse_tokens,
    field_for_model,
    reveal_invisible,
)

CORPUS = [(family, token) for family, tokens in TOKENS.items() for token in tokens]


def test_the_corpus_covers_enough_token_kinds() -> None:
    assert len(TOKENS) >= 10 and len(ALL_TOKENS) >= 24
    assert len(set(ALL_TOKENS)) == len(ALL_TOKENS)


def _no_token_in(text: str) -> None:
    found = [token for token in ALL_TOKENS if token in text]
    assert not found, (found, text)


@pytest.mark.parametrize(("family", "token"), CORPUS, ids=[f"{f}:{t}" for f, t in CORPUS])
def test_each_token_is_defused_readably_and_idempotently(family: str, token: str) -> None:
    for text in (token, f"before {token} after", f"x{token}{token}y", f"line\n{token}\n"):
        out = defuse_tokens(text)
        _no_token_in(out)
        assert token not in out
        assert defuse_tokens(out) == out  # idempotent
        assert len(out) == len(text)  # one character swapped a token: still readable
        assert out.replace("‹", "<").replace("［", "[") == text
        assert body_for_model(out) == out
        field = field_for_model(text)
        assert field_for_model(field) == field and token not in field


@pytest.mark.parametrize(("family", "token"), CORPUS, ids=[f"{f}:{t}" for f, t in CORPUS])
def test_an_invisible_character_inside_a_token_does_not_hide_it(family: str, token: str) -> None:
    for invisible in ("\u200b", "\u2060", "\U000e0041", "\xad"):
        for at in range(1, len(token)):
            text = f"go {token[:at]}{invisible}{token[at:]} go"
            for out in (body_for_model(text), field_for_model(text)):
                assert invisible not in out
                _no_token_in(out)
                assert body_for_model(out) == out
        assert smuggled(token, invisible) not in body_for_model(smuggled(token, invisible))


def test_the_whole_hostile_corpus_at_once() -> None:
    out = body_for_model(hostile("task: "))
    _no_token_in(out)
    assert not any(invisible in out for invisible in INVISIBLES)
    assert "\\u200b" in out and "\\U000e0041" in out and "\\xad" in out
    assert body_for_model(out) == out


@pytest.mark.parametrize(
    "text",
    [
        "if a < b and c > d: pass",
        "def f(xs: List[int]) -> dict[str, int]: return xs[0]",
        "<div class='x'>text</div> <script>1</script> <span>",
        "cat <filename> | grep x; a <| b; parse <|> other; x |> f",
        "usage: tool [options] [args] [TODO] [x] [INSTALL]",
        "1 << 2 >> 3; vector<string> v; <sys>",
        "| col | col |\n|-----|-----|",
        "emoji ⚠️ ❤️ and CJK 表 and — dashes",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert defuse_tokens(text) == text
    assert body_for_model(text) == text


def test_a_body_keeps_lines_and_controls_a_field_does_not() -> None:
    assert body_for_model("a\n\tb\x1b[1m\u200bc") == "a\n\tb\x1b[1m\\u200bc"
    assert field_for_model("a\n\tb\x1b[1m\u200bc") == "a\\n\\tb\\e[1m\\u200bc"
    assert reveal_invisible("lone \ud800 surrogate") == "lone \\ud800 surrogate"


def test_bounded_marks_the_cut() -> None:
    assert bounded("short", 80) == "short"
    assert bounded("x" * 80, 80) == "x" * 80
    cut = bounded("abcdefghij" * 10, 80)
    assert len(cut) == 80 and cut.endswith(ELLIPSIS) and cut.startswith("abcdefghij")
    tail = bounded("/a/" + "d" * 100 + "/project", 80, keep_end=True)
    assert len(tail) == 80 and tail.startswith(ELLIPSIS) and tail.endswith("/project")


_pieces = st.one_of(
    st.sampled_from(ALL_TOKENS),
    st.sampled_from(INVISIBLES),
    st.sampled_from(["<", "[", "]", ">", "|", "｜", "/", " ", "\n", "s", "SYS", "think", "="]),
    st.text(max_size=6),
)
_texts = st.lists(_pieces, max_size=24).map("".join)


@given(_texts)
def test_defusing_is_idempotent_and_swaps_only_token_openers(text: str) -> None:
    out = defuse_tokens(text)
    assert defuse_tokens(out) == out
    assert len(out) == len(text)
    assert all(
        a == b or (a, b) in (("<", "‹"), ("[", "［")) for a, b in zip(text, out, strict=True)
    )


@given(_texts)
def test_no_token_or_invisible_survives_the_model_sanitiser(text: str) -> None:
    for out in (body_for_model(text), field_for_model(text)):
        _no_token_in(out)
        assert not any(invisible in out for invisible in INVISIBLES)
        assert body_for_model(out) == out
