from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from zcoder.sessions import STORE_FILE_NAME, SessionStore, canonical_workspace, default_home


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o000, 0o022, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_zcoder_home_wins_over_xdg(tmp_path: Path) -> None:
    env = {"ZCODER_HOME": str(tmp_path / "zh"), "XDG_CONFIG_HOME": "/xdg", "HOME": "/h"}
    assert default_home(env) == tmp_path / "zh"


def test_zcoder_home_tilde_expands_with_the_given_home() -> None:
    assert default_home({"ZCODER_HOME": "~/zc", "HOME": "/home/ann"}) == Path("/home/ann/zc")


def test_empty_zcoder_home_counts_as_unset() -> None:
    env = {"ZCODER_HOME": "", "XDG_CONFIG_HOME": "/xdg", "HOME": "/h"}
    assert default_home(env) == Path("/xdg/zcoder")


def test_xdg_config_home_is_used_when_no_zcoder_home() -> None:
    assert default_home({"XDG_CONFIG_HOME": "/xdg", "HOME": "/h"}) == Path("/xdg/zcoder")


def test_without_either_variable_home_dot_config_is_used() -> None:
    assert default_home({"HOME": "/home/ann"}) == Path("/home/ann/.config/zcoder")


@pytest.mark.parametrize("xdg", ["", "relative/dir"])
def test_empty_or_relative_xdg_config_home_is_ignored(xdg: str) -> None:
    env = {"XDG_CONFIG_HOME": xdg, "HOME": "/home/ann"}
    assert default_home(env) == Path("/home/ann/.config/zcoder")


def test_canonical_workspace_resolves_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert canonical_workspace(link) == str(real.resolve())
    assert canonical_workspace(str(link) + "/.") == str(real.resolve())


def test_new_home_and_files_are_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    home = tmp_path / "config" / "zcoder"  # the parent is missing too
    with SessionStore(home) as store:
        store.create_session(tmp_path, "coding", "m")  # makes SQLite create -wal and -shm
        assert mode_of(home) == 0o700
        assert mode_of(home.parent) == 0o700
        assert mode_of(home / STORE_FILE_NAME) == 0o600
        for sidecar in ("-wal", "-shm"):
            sidecar_path = home / (STORE_FILE_NAME + sidecar)
            if sidecar_path.exists():
                assert mode_of(sidecar_path) & 0o077 == 0, sidecar
        assert store.warnings == ()


def test_existing_loose_home_is_left_alone_and_reported(tmp_path: Path) -> None:
    home = tmp_path / "shared"
    home.mkdir()
    os.chmod(home, 0o755)
    with SessionStore(home) as store:
        assert mode_of(home) == 0o755
        assert mode_of(home / STORE_FILE_NAME) == 0o600
        assert len(store.warnings) == 1
        assert str(home) in store.warnings[0]
        assert "chmod 700" in store.warnings[0]


def test_existing_loose_store_file_is_left_alone_and_reported(home: Path) -> None:
    SessionStore(home).close()
    db = home / STORE_FILE_NAME
    os.chmod(db, 0o644)
    with SessionStore(home) as store:
        assert mode_of(db) == 0o644
        assert any(str(db) in w and "chmod 600" in w for w in store.warnings)


def test_home_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    from zcoder.sessions import SessionStoreError

    not_dir = tmp_path / "file"
    not_dir.write_text("x")
    with pytest.raises(SessionStoreError, match="ZCODER_HOME"):
        SessionStore(not_dir)
    assert not_dir.read_text() == "x"


def test_home_with_uri_special_characters_works(tmp_path: Path) -> None:
    home = tmp_path / "we?ird #%20 home"
    with SessionStore(home) as store:
        info = store.create_session(tmp_path, "coding", "m")
    assert (home / STORE_FILE_NAME).is_file()
    assert not (tmp_path / "we").exists()
    with SessionStore(home) as store:
        assert [s.id for s in store.list_sessions(tmp_path, "coding")] == [info.id]
