"""``zcoder --fork ID``: with --prompt it runs in a copy and leaves the saved session as
it was; it does not go with --resume nor --connect (said, exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from zcoder.cli import main
from zcoder.sessions import SessionStore


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("ZCODER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZCODER_RELAY_DIR", str(tmp_path / "relay"))
    return workspace


def test_fork_with_prompt_goes_on_in_a_copy(
    env: Path, fake: FakeOllama, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    fake.enqueue(Turn.text("first answer"), Turn.text("answer in the fork"))
    assert main(["--prompt", "first question"]) == 0
    with SessionStore(env.parent / "home") as store:
        [source] = store.list_sessions(env, "coding")
    assert main(["--fork", source.id[:8], "--prompt", "go on here"]) == 0
    assert "answer in the fork" in capsys.readouterr().out
    with SessionStore(env.parent / "home") as store:
        kept = store.load(source.id, env, "coding")
        [fork] = [s for s in store.list_sessions(env, "coding") if s.id != source.id]
        forked = store.load(fork.id, env, "coding")
    assert kept.user_ledger == ["first question"]
    assert forked.user_ledger == ["first question", "go on here"]
    assert forked.info.title == "fork of first question"
    sent = fake.chat_bodies[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["first question", "go on here"]


def test_fork_does_not_go_with_resume_nor_connect(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--fork", "a", "--resume", "b"])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert main(["--connect", "host", "--fork", "a"]) == 2
    assert capsys.readouterr().err == (
        "zcoder: --fork does not go with --connect: fork on the remote host (/fork there)\n"
    )
