"""Confinement: nothing outside the canonical workspace is read or written."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zcoder.tools import ConfinementError, ToolContext, confinement, default_registry
from zcoder.tools.confinement import (
    atomic_write,
    canonical_workspace,
    read_bytes,
    read_lines,
    resolve_path,
    resolve_write_target,
)
from zcoder.tools.offload import StopSignal, ToolStopped

REGISTRY = default_registry()


def test_relative_path_resolves_inside(workspace: Path) -> None:
    (workspace / "a").mkdir()
    confined = resolve_path(workspace, "a/../a/./b.txt")
    assert confined.absolute == workspace / "a" / "b.txt"
    assert confined.display == "a/b.txt"


def test_workspace_itself_is_dot(workspace: Path) -> None:
    assert resolve_path(workspace, ".").display == "."
    assert resolve_path(workspace, str(workspace)).parts == ()


@pytest.mark.parametrize("raw", ["..", "../x", "a/../../x", "/etc/passwd", "/", "//etc"])
def test_escapes_are_refused(workspace: Path, raw: str) -> None:
    with pytest.raises(ConfinementError, match="outside the workspace"):
        resolve_path(workspace, raw)


def test_absolute_path_inside_is_allowed(workspace: Path) -> None:
    assert resolve_path(workspace, str(workspace / "x.txt")).display == "x.txt"


def test_sibling_with_common_prefix_is_outside(workspace: Path) -> None:
    sibling = workspace.parent / (workspace.name + "-evil")
    sibling.mkdir()
    with pytest.raises(ConfinementError):
        resolve_path(workspace, str(sibling / "f"))


@pytest.mark.parametrize("raw", ["a\x00b", "", "   "])
def test_nul_and_empty_paths_are_refused(workspace: Path, raw: str) -> None:
    with pytest.raises(ConfinementError):
        resolve_path(workspace, raw)
    with pytest.raises(ConfinementError):
        resolve_write_target(workspace, raw)


def test_symlinked_file_to_outside_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ConfinementError, match="outside"):
        resolve_path(workspace, "link.txt")


def test_symlinked_dir_to_outside_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "linkdir").symlink_to(outside)
    with pytest.raises(ConfinementError, match="outside"):
        resolve_path(workspace, "linkdir/secret.txt")
    with pytest.raises(ConfinementError, match="outside"):
        resolve_write_target(workspace, "linkdir/new.txt")


def test_symlink_inside_workspace_is_followed_for_reads(workspace: Path) -> None:
    (workspace / "real.txt").write_text("hi")
    (workspace / "alias.txt").symlink_to("real.txt")
    assert resolve_path(workspace, "alias.txt").display == "real.txt"


def test_write_target_that_is_a_symlink_is_refused_even_inside(workspace: Path) -> None:
    (workspace / "real.txt").write_text("hi")
    (workspace / "alias.txt").symlink_to("real.txt")
    with pytest.raises(ConfinementError, match="symbolic link"):
        resolve_write_target(workspace, "alias.txt")


def test_write_target_must_name_a_file(workspace: Path) -> None:
    for raw in (".", "..", "dir/", "a/.."):
        with pytest.raises(ConfinementError):
            resolve_write_target(workspace, raw)


def test_canonical_workspace_resolves_symlinks(tmp_path: Path, workspace: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    assert canonical_workspace(alias) == workspace
    with pytest.raises(ConfinementError):
        canonical_workspace(tmp_path / "missing")


def test_context_canonicalises_workspace_through_symlink(
    tmp_path: Path, workspace: Path, ctx: ToolContext
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    other = ToolContext(alias, ctx.profile, ctx.origin, ctx.approval, ctx.approver)
    assert other.workspace == workspace


def test_parent_swapped_for_symlink_between_check_and_write(workspace: Path, outside: Path) -> None:
    (workspace / "sub").mkdir()
    target = resolve_write_target(workspace, "sub/file.txt")  # the check
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside)  # the swap
    with pytest.raises(ConfinementError, match="symbolic link"):
        atomic_write(target, b"pwned")
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_final_component_swapped_for_symlink_is_not_followed(
    workspace: Path, outside: Path
) -> None:
    (workspace / "file.txt").write_text("old")
    target = resolve_write_target(workspace, "file.txt")
    (workspace / "file.txt").unlink()
    (workspace / "file.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ConfinementError):
        atomic_write(target, b"pwned")
    assert (outside / "secret.txt").read_text() == "outside secret\n"


def test_read_through_swapped_parent_fails(workspace: Path, outside: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "secret.txt").write_text("inside")
    target = resolve_path(workspace, "sub/secret.txt")
    (workspace / "sub" / "secret.txt").unlink()
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside)
    with pytest.raises(ConfinementError):
        read_bytes(target, 1000)


def test_missing_parents_are_created_inside(workspace: Path) -> None:
    target = resolve_write_target(workspace, "a/b/c.txt")
    assert atomic_write(target, b"x") is False
    assert (workspace / "a" / "b" / "c.txt").read_bytes() == b"x"


def test_atomic_write_keeps_mode_and_leaves_no_temp(workspace: Path) -> None:
    path = workspace / "run.sh"
    path.write_text("old")
    path.chmod(0o755)
    assert atomic_write(resolve_write_target(workspace, "run.sh"), b"new") is True
    assert path.read_bytes() == b"new"
    assert path.stat().st_mode & 0o777 == 0o755
    assert os.listdir(workspace) == ["run.sh"]


async def test_tools_refuse_outside_paths(ctx: ToolContext, outside: Path) -> None:
    (ctx.workspace / "out").symlink_to(outside)
    (ctx.workspace / "secret-link").symlink_to(outside / "secret.txt")
    calls = [
        ("read_file", {"path": "../outside/secret.txt"}),
        ("read_file", {"path": str(outside / "secret.txt")}),
        ("read_file", {"path": "secret-link"}),
        ("read_file_range", {"path": "out/secret.txt", "start_line": 1, "end_line": 1}),
        ("write_file", {"path": "out/new.txt", "content": "x"}),
        ("write_file", {"path": "secret-link", "content": "x"}),
        ("write_file", {"path": "../outside/new.txt", "content": "x"}),
        ("replace_text", {"path": "secret-link", "old_text": "outside", "new_text": "x"}),
        ("list_files", {"path": "out"}),
        ("search", {"query": "secret", "path": "out"}),
        ("run_command", {"command": "true", "cwd": "out"}),
    ]
    for name, args in calls:
        result = await REGISTRY.dispatch(name, args, ctx)
        assert not result.ok, (name, args, result)
        assert result.output.startswith("Error:")
        assert "Traceback" not in result.output
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "outside secret\n"


async def test_search_does_not_follow_symlinked_dirs(ctx: ToolContext, outside: Path) -> None:
    (ctx.workspace / "out").symlink_to(outside)
    (ctx.workspace / "here.txt").write_text("secret here\n")
    result = await REGISTRY.dispatch("search", {"query": "secret"}, ctx)
    assert result.output == "here.txt:1:secret here"


PATH_PARTS = st.lists(
    st.sampled_from(["..", ".", "a", "b", "/", "//", "link", "out", "x\x00", " ", "~", "*"]),
    max_size=8,
).map("/".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(PATH_PARTS, st.text(max_size=40)))
def test_resolved_paths_are_always_inside_or_refused(
    workspace: Path, outside: Path, raw: str
) -> None:
    if not (workspace / "link").is_symlink():
        (workspace / "a").mkdir(exist_ok=True)
        (workspace / "link").symlink_to(outside)
    for resolve in (resolve_path, resolve_write_target):
        try:
            confined = resolve(workspace, raw)
        except ConfinementError:
            continue
        real = Path(os.path.realpath(confined.absolute))
        assert real == workspace or real.is_relative_to(workspace), raw


async def test_racing_symlink_swaps_never_let_a_write_escape(
    ctx: ToolContext, outside: Path
) -> None:
    """A thread keeps swapping sub/ between a real directory and a link to outside."""
    import threading

    ws = ctx.workspace
    (ws / "sub").mkdir()
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                os.rename(ws / "sub", ws / "held")
                os.symlink(outside, ws / "sub")
                os.unlink(ws / "sub")
                os.rename(ws / "held", ws / "sub")

    thread = threading.Thread(target=swapper)
    thread.start()
    try:
        for index in range(300):
            await REGISTRY.dispatch(
                "write_file", {"path": f"sub/f{index}.txt", "content": "x"}, ctx
            )
    finally:
        stop.set()
        thread.join()
    assert sorted(os.listdir(outside)) == ["secret.txt"]


# --- read_lines: the lines of a file as iteration gives them, with stop checks ---------


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200), chunk=st.integers(1, 9))
def test_read_lines_gives_exactly_the_lines_iteration_gives(data: bytes, chunk: int) -> None:
    original = confinement.READ_CHUNK_BYTES
    confinement.READ_CHUNK_BYTES = chunk  # long lines come in several pieces
    try:
        assert list(read_lines(io.BytesIO(data), StopSignal())) == list(io.BytesIO(data))
    finally:
        confinement.READ_CHUNK_BYTES = original


def test_read_lines_stops_within_a_long_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confinement, "READ_CHUNK_BYTES", 10)
    stop = StopSignal()
    pieces: list[int] = []

    class Handle(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            pieces.append(size or -1)
            if len(pieces) == 3:
                stop.set()  # asked to stop in the middle of the one long line
            return super().read(size)

    lines = read_lines(Handle(b"short\n" + b"x" * 1000 + b"\n"), stop)
    assert next(lines) == b"short\n"
    with pytest.raises(ToolStopped):
        next(lines)
    assert len(pieces) == 3  # of the 101 pieces of the file
