"""Walking the history (Up, Down) and searching it (Ctrl+R): the rules, without the app."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zcoder.tui.state.recall import Match, Recall, search, search_newer


def test_up_goes_back_and_down_comes_forward_to_the_draft() -> None:
    recall = Recall(["one", "two", "three"])
    assert recall.newer("draft") is None  # nothing newer than the draft
    assert recall.older("draft") == "three"
    assert recall.older("three") == "two"
    assert recall.older("two") == "one"
    assert recall.older("one") is None  # the oldest
    assert recall.position == 0
    assert recall.newer("one") == "two"
    assert recall.newer("two") == "three"
    assert recall.newer("three") == "draft"
    assert not recall.walking
    assert recall.newer("draft") is None


def test_an_empty_history_recalls_nothing_and_keeps_the_draft() -> None:
    recall = Recall([])
    assert recall.older("typed") is None
    assert recall.newer("typed") is None
    assert not recall.walking


def test_edits_made_while_walking_stay_until_the_prompt_is_sent() -> None:
    recall = Recall(["one", "two"])
    assert recall.older("my draft") == "two"
    assert recall.older("two, edited") == "one"
    assert recall.newer("one") == "two, edited"
    assert recall.newer("two, edited") == "my draft"
    recall.reset()
    assert recall.older("") == "two"  # sent: the edit is forgotten
    assert recall.newer("two") == ""


def test_an_edit_undone_by_hand_is_no_edit() -> None:
    recall = Recall(["one", "two"])
    recall.older("")
    assert recall.older("two") == "one"
    assert recall.newer("one") == "two"


def test_entries_equal_to_the_text_shown_are_passed_over() -> None:
    recall = Recall(["one", "same", "two", "same"])
    assert recall.older("same") == "two"
    assert recall.older("two") == "same"
    assert recall.older("same") == "one"
    assert recall.newer("one") == "same"
    assert recall.newer("same") == "two"
    assert recall.newer("two") == "same"
    assert recall.newer("same") == "same"  # the draft, whatever it is
    assert Recall(["x"]).older("x") is None


def test_a_search_jump_keeps_the_draft_and_walks_on_from_the_match() -> None:
    entries = ["alpha", "beta", "gamma"]
    recall = Recall(entries)
    assert recall.jump(0, "draft") == "alpha"
    assert recall.newer("alpha") == "beta"
    assert recall.newer("beta") == "gamma"
    assert recall.newer("gamma") == "draft"


def test_the_history_growing_while_at_the_draft_is_seen() -> None:
    entries = ["one"]
    recall = Recall(entries)
    entries.append("two")
    assert recall.older("") == "two"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=5), max_size=6),
    st.text(max_size=5),
    st.lists(st.booleans(), max_size=30),
)
def test_the_draft_is_never_lost(entries: list[str], draft: str, moves: list[bool]) -> None:
    """Any walk of Ups and Downs, then Downs until the end, gives the draft back."""
    recall = Recall(entries)
    shown = draft
    for up in moves:
        found = recall.older(shown) if up else recall.newer(shown)
        shown = found if found is not None else shown
    while (found := recall.newer(shown)) is not None:
        shown = found
    assert shown == draft


def test_search_finds_the_newest_match_and_then_older_ones() -> None:
    entries = ["fix the test", "run make", "fix the build", "deploy"]
    assert search(entries, "fix") == Match(2, 0, 3)
    assert search(entries, "fix", before=2) == Match(0, 0, 3)
    assert search(entries, "fix", before=0) is None
    assert search(entries, "the b") == Match(2, 4, 9)
    assert search(entries, "") is None
    assert search(entries, "nothing") is None
    assert search_newer(entries, "fix", after=0) == Match(2, 0, 3)
    assert search_newer(entries, "fix", after=2) is None


def test_search_ignores_case_unless_the_query_has_a_capital() -> None:
    entries = ["README first", "readme second"]
    assert search(entries, "readme") == Match(1, 0, 6)
    assert search(entries, "README") == Match(0, 0, 6)
    assert search(entries, "Readme") is None


def test_search_finds_text_on_any_line_of_a_multi_line_prompt() -> None:
    entries = ["first line\nsecond (line)\nthird"]
    assert search(entries, "(line)") == Match(0, 18, 24)
    assert search(entries, "e\ns") == Match(0, 9, 12)
