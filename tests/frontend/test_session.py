"""Opening a session as every front end opens it (zcoder.frontend.session): the lock taken
and never left behind, the saved session loaded or an empty one taken, a resumed
session's model put back when the server has it, the context window sized."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.workspace import home, workspace
from tests.sessions.test_locks import start_holder, stop
from zcoder.config import Config, load_config
from zcoder.frontend.session import open_session, resolve_window, size_window
from zcoder.model import ModelError, assistant_message, user_message
from zcoder.sessions import SessionNotFoundError, SessionStore, SessionStoreError
from zcoder.sessions.locks import SessionInUseError, acquire

__all__ = ["home", "workspace"]

MODEL = "qwen3-coder"


def config_for(home: Path, workspace: Path, **flags: Any) -> Config:
    return load_config({"ZCODER_HOME": str(home)}, workspace=str(workspace), model=MODEL, **flags)


@pytest.fixture
def config(home: Path, workspace: Path) -> Config:
    return config_for(home, workspace)


@pytest.fixture
def store(config: Config) -> Any:
    with SessionStore(config.home) as opened:
        yield opened


def saved(store: SessionStore, config: Config, model: str = MODEL) -> str:
    """A session with a conversation, as a finished turn leaves it."""
    info = store.create_session(config.workspace, config.profile.value, model)
    store.record_user_message(info.id, "fix the tests")
    store.append_messages(info.id, [user_message("fix the tests"), assistant_message("done")])
    store.append_event(info.id, "assistant", "done")
    return info.id


def is_free(config: Config, session_id: str) -> bool:
    """Nobody holds the session's lock (taking it here succeeds)."""
    try:
        acquire(config.home, session_id).release()
    except SessionInUseError:
        return False
    return True


def test_a_saved_session_is_loaded_and_held_until_released(
    store: SessionStore, config: Config
) -> None:
    session_id = saved(store, config)
    opened = open_session(store, config, MODEL, resume=session_id)
    assert opened.resumed and opened.id == session_id
    assert [m["content"] for m in opened.data.messages] == ["fix the tests", "done"]
    assert opened.data.user_ledger == ["fix the tests"]
    assert [(e.role, e.text) for e in opened.data.events] == [
        ("user", "fix the tests"),
        ("assistant", "done"),
    ]
    assert opened.saved_model == MODEL
    assert not is_free(config, session_id)
    with pytest.raises(SessionInUseError, match=f"session {session_id} is open in"):
        open_session(store, config, MODEL, resume=session_id)  # a second front end
    opened.release()
    assert is_free(config, session_id)
    opened.release()  # twice is harmless


def test_a_session_open_in_another_process_is_refused(store: SessionStore, config: Config) -> None:
    session_id = saved(store, config)
    holder = start_holder(config.home, session_id)
    try:
        with pytest.raises(SessionInUseError, match=f"pid {holder.pid}"):
            open_session(store, config, MODEL, resume=session_id)
    finally:
        stop(holder, 15)
    open_session(store, config, MODEL, resume=session_id).release()  # free once it is gone


@pytest.mark.parametrize("typed", ["1788012120_10392", "../../etc/passwd", ""])
def test_no_such_session_is_a_lookup_error_and_leaves_no_lock(
    store: SessionStore, config: Config, typed: str
) -> None:
    with pytest.raises(LookupError) as raised:
        open_session(store, config, MODEL, resume=typed)
    assert isinstance(raised.value, SessionNotFoundError)
    if typed == "1788012120_10392":
        assert is_free(config, typed)


def test_a_session_of_another_workspace_is_not_found_and_its_lock_is_let_go(
    store: SessionStore, config: Config, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    session_id = saved(store, config_for(config.home, other))
    with pytest.raises(SessionNotFoundError):
        open_session(store, config, MODEL, resume=session_id)
    assert is_free(config, session_id)


def test_a_new_session_takes_the_newest_empty_one_nobody_holds(
    store: SessionStore, config: Config
) -> None:
    saved(store, config)  # has a conversation: never taken
    held = store.create_session(config.workspace, "coding", "old-model")
    other = acquire(config.home, held.id)  # another zcoder has it open
    try:
        opened = open_session(store, config, MODEL, one_shot=True)
        assert not opened.resumed and opened.saved_model is None
        assert opened.id != held.id
        assert [str(busy) for busy in opened.in_use] == [
            f"session {held.id} is open in another zcoder (pid {os.getpid()})"
        ]
        assert opened.data.messages == [] and opened.data.events == []
        assert opened.data.info.one_shot and opened.data.info.model == MODEL
        assert not is_free(config, opened.id)
        opened.release()
    finally:
        other.release()
    again = open_session(store, config, MODEL)  # the newest empty one, free now
    assert again.id == opened.id and again.in_use == []
    again.release()


def test_the_session_open_here_is_handed_back_without_a_second_lock(
    store: SessionStore, config: Config
) -> None:
    first = open_session(store, config, MODEL)
    again = open_session(store, config, MODEL, mine=first.id)
    assert again.id == first.id and again.lock is None
    resumed = open_session(store, config, MODEL, resume=first.id, mine=first.id)
    assert resumed.lock is None and resumed.resumed
    first.release()


def test_a_failed_start_releases_the_lock_it_took(
    store: SessionStore, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[str] = []

    def failing(*args: Any, take: Any, **kwargs: Any) -> Any:
        made = store.create_session(config.workspace, "coding", MODEL)
        assert take(made.id)
        taken.append(made.id)
        raise SessionStoreError(config.home, "the disk is full")

    monkeypatch.setattr(store, "reuse_or_create", failing)
    with pytest.raises(SessionStoreError):
        open_session(store, config, MODEL)
    assert taken and is_free(config, taken[0])


@dataclass
class Server:
    """What ``choose_model`` asks the model client: the models the server lists."""

    models: list[str] | None
    asked: int = 0

    async def list_models(self) -> list[str]:
        self.asked += 1
        if self.models is None:
            raise ModelError("the server is not reachable")
        return self.models


def model_of(store: SessionStore, config: Config, session_id: str) -> str:
    return next(
        i.model for i in store.list_sessions(config.workspace, "coding") if i.id == session_id
    )


async def choose(store: SessionStore, config: Config, server: Server, **kw: Any) -> Any:
    session_id = saved(store, config, model="llama3.2")
    opened = open_session(store, config, MODEL, resume=session_id)
    try:
        chosen = await opened.choose_model(store, server, MODEL, **kw)  # type: ignore[arg-type]
    finally:
        opened.release()
    return chosen, model_of(store, config, session_id)


async def test_a_resumed_session_gets_its_model_back_when_the_server_lists_it(
    store: SessionStore, config: Config
) -> None:
    (model, notice), recorded = await choose(
        store, config, Server(["llama3.2:latest"]), keep_model=False
    )
    assert model == "llama3.2" and recorded == "llama3.2"
    assert notice == f"Model: llama3.2 (this session's model; it was {MODEL})."


async def test_a_model_the_server_lacks_is_not_put_back_and_the_session_goes_on_with_ours(
    store: SessionStore, config: Config
) -> None:
    (model, notice), recorded = await choose(store, config, Server([MODEL]), keep_model=False)
    assert model == MODEL and recorded == MODEL
    assert notice is not None and "which the server does not list" in notice


async def test_an_unreachable_server_trusts_the_saved_model(
    store: SessionStore, config: Config
) -> None:
    (model, _notice), recorded = await choose(store, config, Server(None), keep_model=False)
    assert model == "llama3.2" and recorded == "llama3.2"


async def test_keep_model_does_not_ask_the_server_and_saves_ours(
    store: SessionStore, config: Config
) -> None:
    server = Server(["llama3.2"])
    (model, notice), recorded = await choose(store, config, server, keep_model=True)
    assert (model, notice, recorded, server.asked) == (MODEL, None, MODEL, 0)


async def test_a_model_that_cannot_be_saved_is_used_all_the_same(
    store: SessionStore, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any) -> None:
        raise SessionStoreError(Path("store"), "read-only")

    monkeypatch.setattr(store, "set_model", broken)
    (model, _notice), recorded = await choose(store, config, Server([MODEL]), keep_model=False)
    assert model == MODEL and recorded == "llama3.2"


@dataclass
class Settings:
    model: str
    num_ctx: int | None = None


@dataclass
class SizedAgent:
    """The two things ``size_window`` reads of an agent, and the one it sets."""

    settings: Settings
    client: Any = None


@dataclass
class Probe:
    """A model client that tells the window Ollama loaded and the one the model has."""

    loaded: int | None
    trained: int | None
    asked: list[str] = field(default_factory=list)

    async def loaded_context_length(self, model: str) -> int | None:
        self.asked.append(model)
        return self.loaded

    async def trained_context_length(self, model: str) -> int | None:
        self.asked.append(model)
        return self.trained


async def test_the_window_set_by_flag_sizes_the_agent_and_bad_settings_are_said(
    home: Path, workspace: Path
) -> None:
    config = config_for(home, workspace, context_window="16384")
    home.mkdir()
    (home / "settings.json").write_text("{not json", encoding="utf-8")
    agent = SizedAgent(Settings(MODEL), Probe(loaded=None, trained=None))
    warnings: list[str] = []
    window = await size_window(agent, config, warnings.append)  # type: ignore[arg-type]
    assert agent.settings.num_ctx == window.tokens == 16384
    assert window.source == "--context-window" and agent.client.asked == []
    assert len(warnings) == 1 and "settings.json" in warnings[0]


async def test_without_a_setting_the_window_is_asked_of_the_server_for_that_model(
    home: Path, workspace: Path
) -> None:
    config = config_for(home, workspace)
    probe = Probe(loaded=32768, trained=None)
    window = await resolve_window(config, "other-model", probe, print)
    assert window.tokens == 32768 and probe.asked == ["other-model"]
