"""Finding a session by a typed id or prefix, and how sessions are listed
(zcoder.frontend.resume)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sessions.conftest import FakeClock
from zcoder.frontend.resume import (
    ResumeError,
    age,
    backend_flags,
    find_session,
    restored_model,
    resume_command,
    session_lines,
    start_words,
)
from zcoder.sessions import SessionStore


def make(store: SessionStore, workspace: Path, clock: FakeClock, title: str) -> str:
    info = store.create_session(workspace, "coding", "qwen3-coder")
    store.record_user_message(info.id, title)
    clock.advance(60)
    return info.id


def test_a_unique_prefix_finds_the_session_an_exact_id_wins(
    store: SessionStore, workspace: Path, clock: FakeClock
) -> None:
    first = make(store, workspace, clock, "first")
    second = make(store, workspace, clock, "second")
    assert find_session(store, first, workspace, "coding").id == first
    assert find_session(store, f"  {second}\n", workspace, "coding").id == second
    unique = first[: len(first) - 4] if first[:-4] != second[:-4] else first
    assert find_session(store, unique, workspace, "coding").id == first
    # Wildcards mean nothing in a typed id.
    with pytest.raises(ResumeError):
        find_session(store, "%", workspace, "coding")
    with pytest.raises(ResumeError):
        find_session(store, first[:3] + "_", workspace, "coding")


def test_an_ambiguous_prefix_lists_the_candidates(
    store: SessionStore, workspace: Path, clock: FakeClock
) -> None:
    first = make(store, workspace, clock, "first job")
    second = make(store, workspace, clock, "second job")
    common = ""
    for a, b in zip(first, second, strict=True):
        if a != b:
            break
        common += a
    with pytest.raises(ResumeError) as raised:
        find_session(store, common, workspace, "coding")
    text = str(raised.value)
    assert f"{common!r} names 2 sessions" in text
    assert first in text and second in text and "first job" in text


def test_an_unknown_id_lists_the_recent_ids_with_title_and_age(
    store: SessionStore, workspace: Path, clock: FakeClock, tmp_path: Path
) -> None:
    ids = [make(store, workspace, clock, f"job {n}") for n in range(12)]
    other = tmp_path / "elsewhere"
    other.mkdir()
    theirs = store.create_session(other, "coding", "m").id
    with pytest.raises(ResumeError) as raised:
        find_session(store, "nope", workspace, "coding")
    lines = str(raised.value).splitlines()
    assert lines[0] == f"no session 'nope' in this workspace ({workspace}, profile coding)"
    listed = [line.split()[0] for line in lines[2:]]
    assert listed == list(reversed(ids))[:10]  # newest first, ten of them
    assert theirs not in str(raised.value)
    assert "job 11" in lines[2] and "ago" in lines[2]
    # Of another workspace, the id is unknown here.
    with pytest.raises(ResumeError, match="no session"):
        find_session(store, theirs, workspace, "coding")


def test_an_unknown_id_in_an_empty_workspace_says_there_are_none(
    store: SessionStore, workspace: Path
) -> None:
    with pytest.raises(ResumeError, match="There are no saved sessions here yet"):
        find_session(store, "1788", workspace, "coding")


def test_message_counts_count_what_the_transcript_shows_and_has_content(
    store: SessionStore, workspace: Path
) -> None:
    busy = store.create_session(workspace, "coding", "m")
    empty = store.create_session(workspace, "coding", "m")
    store.record_user_message(busy.id, "hi")
    store.append_event(busy.id, "assistant", "hello")
    store.append_event(busy.id, "tool", "$ ls", {"status": "completed"})
    store.append_event(busy.id, "system", "notice")
    assert store.message_counts(workspace, "coding") == {busy.id: 2, empty.id: 0}
    assert store.has_content(busy.id) and not store.has_content(empty.id)
    assert store.last_event_text(busy.id, "assistant") == "hello"
    assert store.last_event_text(empty.id, "assistant") is None


def test_listing_lines_are_aligned_and_hostile_titles_made_visible(
    store: SessionStore, workspace: Path, clock: FakeClock
) -> None:
    plain = make(store, workspace, clock, "plain")
    hostile = make(store, workspace, clock, "evil \x1b]52;c;AAAA\x07 title")
    sessions = store.list_sessions(workspace, "coding")
    counts = store.message_counts(workspace, "coding")
    lines = session_lines(sessions, now=clock.now, counts=counts, current=plain)
    assert all("\x1b" not in line and "\x07" not in line for line in lines)
    assert lines[0].startswith(f"  {hostile}") and lines[1].startswith(f"● {plain}")
    assert "qwen3-coder" in lines[0] and "1 message " in lines[0]
    assert lines[0].index("qwen3") == lines[1].index("qwen3")


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (5, "just now"),
        (125, "2 min ago"),
        (7300, "2 h ago"),
        (86400, "1 day ago"),
        (3e5, "3 days ago"),
    ],
)
def test_age(seconds: float, said: str) -> None:
    assert age(seconds) == said


def test_resume_command_adds_workspace_and_profile_only_when_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ZCODER_PROFILE", raising=False)
    ws = tmp_path / "my project"
    ws.mkdir()
    assert resume_command("17_1", ws, "coding", cwd=ws) == "zcoder --resume 17_1"
    assert resume_command("17_1", ws, "sysadmin", cwd=tmp_path) == (
        f"zcoder --resume 17_1 -w '{ws}' --profile sysadmin"
    )


def test_started_by_make_the_hint_is_make_run_with_args(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make run` / `make demo` run the venv's zcoder, which is not on PATH (issue 27
    item 14): the hint goes through make, the demo's model file with it."""
    monkeypatch.delenv("ZCODER_PROFILE", raising=False)
    made = {"ZCODER_STARTED_BY": "make -C /repo run", "MAKELEVEL": "1", "PATH": "/usr/bin"}
    start = start_words("/repo/.venv/bin/zcoder", made)
    assert start == ["make", "-C", "/repo", "run"]
    # Any other make (a test suite run by `make test`, a project's own Makefile) is not it.
    assert start_words("/repo/.venv/bin/zcoder", {"MAKELEVEL": "1"}) == ["/repo/.venv/bin/zcoder"]
    model = tmp_path / "SmolLM2 135M.gguf"
    flags = backend_flags(
        backend="openai", host="", base_url="http://127.0.0.1:41234/v1", gguf=model, environ={}
    )
    assert resume_command("17_1", tmp_path, "coding", cwd=tmp_path, start=start, backend=flags) == (
        f"make -C /repo run 'ARGS=--resume 17_1 --gguf '\"'\"'{model}'\"'\"''"
    )


def test_the_hint_starts_the_program_that_ran_when_path_does_not_find_it(tmp_path: Path) -> None:
    program = tmp_path / "venv" / "bin" / "zcoder"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    elsewhere = {"PATH": "/nonexistent"}
    assert start_words(str(program), elsewhere) == [str(program)]
    assert start_words(str(program), {"PATH": str(program.parent)}) == ["zcoder"]
    main = "/x/site-packages/zcoder/__main__.py"
    assert start_words(main, elsewhere)[1:] == ["-m", "zcoder"]  # python -m zcoder


def test_the_hint_names_the_server_the_environment_would_not_choose(tmp_path: Path) -> None:
    def ollama(host: str, env: dict[str, str]) -> list[str]:
        return backend_flags(backend="ollama", host=host, base_url="", gguf=None, environ=env)

    def openai(url: str, env: dict[str, str], gguf: Path | None = None) -> list[str]:
        return backend_flags(backend="openai", host="", base_url=url, gguf=gguf, environ=env)

    assert ollama("http://127.0.0.1:11434", {}) == []
    assert ollama("http://10.0.0.5:11434", {}) == ["--host", "http://10.0.0.5:11434"]
    assert ollama("http://10.0.0.5:11434", {"OLLAMA_HOST": "10.0.0.5"}) == []
    url = "http://127.0.0.1:8080/v1"
    assert openai(url, {}) == ["--base-url", url]
    assert openai(url, {"ZCODER_BASE_URL": url}) == []
    # An embedded model: its file, never its server's passing address.
    model = tmp_path / "m.gguf"
    embedded = "http://127.0.0.1:4321/v1"
    assert openai(embedded, {}, model) == ["--gguf", str(model)]
    assert openai(embedded, {"ZCODER_GGUF": str(model)}, model) == []


def test_restored_model_needs_the_server_to_list_it() -> None:
    assert restored_model("qwen3-coder", "qwen3-coder:latest", ["x"]) == (
        "qwen3-coder:latest",
        None,
    )
    model, notice = restored_model(
        "llama3.2", "qwen3-coder", ["qwen3-coder:latest", "llama3.2:latest"]
    )
    assert model == "llama3.2" and notice is not None and "it was qwen3-coder" in notice
    model, notice = restored_model("gone", "qwen3-coder", ["qwen3-coder:latest"])
    assert model == "qwen3-coder" and notice is not None and "does not list" in notice
    assert restored_model("llama3.2", "qwen3-coder", None)[0] == "llama3.2"  # cannot ask
