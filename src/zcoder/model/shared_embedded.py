"""One embedded server for every zcoder on the same model file: ``--gguf`` shared.

Three agents started with ``--gguf`` on one file would each load the model and each
keep a window's cache. Instead the first starts the server (zcoder.model.embedded) and
every later one attaches to it; the last one to leave stops it. The server runs
``SHARED_SLOTS`` conversations at once in one window's cache (llama.cpp's unified KV
cache) and keeps an idle conversation in its RAM prompt cache, so each agent finds its
own prompt again at its next request. Requests name no slot: pinning one (``id_slot``)
was measured to lose the cache on this llama.cpp (a pinned request to a slot whose
tokens were moved to the RAM cache reads its whole prompt again, llama.cpp issue
28139; with idle slots kept in place instead, three agents' conversations outgrow one
window and evict each other).

Who uses the server is the kernel's to know, not a file's: each user holds a shared
flock on ``KEY.users`` for as long as it runs, dropped by the kernel however it ends
(``kill -9`` included). The server's own process (embedded_child) waits for the
exclusive lock on the same file, which is granted only once every user is gone; it then
withdraws the address (``KEY.json``) and exits. The first instance starts it detached
(its own session, no pipe it must outlive), so the first instance may leave, or be
killed, while the others go on.

Attaching happens under ``KEY.start`` (exclusive), so two instances starting together
start one server: the second waits for the first's to answer, then finds its address.

KEY is a digest of the file's canonical path, device, inode, size and modification
time, and of everything the server is started with (window, template, threads): only
instances that would start the same server share one. Everything lives in
``$ZCODER_HOME/embedded/`` (0700; files 0600). The server binds 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from zcoder.base.flocks import lock_free, open_lock
from zcoder.base.processes import pid_alive
from zcoder.base.safefile import (
    PRIVATE_FILE_MODE,
    UnsafeFile,
    ensure_private_dir,
    read_own_file,
    replace_with,
)
from zcoder.model.embedded import (
    START_TIMEOUT,
    STOP_GRACE,
    EmbeddedError,
    LaunchPlan,
    start_embedded,
)

__all__ = ["SHARED_SLOTS", "SharedServer", "attach_shared", "share_dir", "share_key"]

SHARED_SLOTS: Final = 4
"""Conversations the shared server runs at once (they share one window's cache, so more
slots cost no memory, only batch width)."""
SHARE_DIR: Final = "embedded"
_INFO_LIMIT: Final = 4096
_HEALTH_TIMEOUT: Final = 5.0


def share_dir(home: Path) -> Path:
    """Where the shared servers' locks and addresses are."""
    return home / SHARE_DIR


def share_key(plan: LaunchPlan) -> str:
    """The name of the server ``plan`` would start (see the module docstring)."""
    model = plan.model.resolve()
    st = model.stat()
    identity = [str(model), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, plan.spec()]
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class _Address:
    url: str
    pid: int
    slots: int
    key: str  # its API key (the info file is the user's alone, 0600)


class SharedServer:
    """This instance's use of a shared server: its URL, and ``stop()`` (leave)."""

    def __init__(
        self,
        address: _Address,
        *,
        holds: list[int],
        users: Path,
        process: subprocess.Popen[bytes] | None,
    ) -> None:
        self.url = address.url
        self.pid = address.pid
        self.slots = address.slots
        self.key = address.key
        """The API key its requests need (sent as ``Authorization: Bearer``)."""
        self.started = process is not None
        """Whether this instance started the server (the others attached to it)."""
        self._holds = holds
        self._users = users
        self._process = process

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def alive(self) -> bool:
        return pid_alive(self.pid)

    def stop(self) -> None:
        """Leave: drop the shared lock. The server exits by itself once no
        one else uses it; the instance that started it waits for that, when it was last."""
        holds, self._holds = self._holds, []
        for fd in reversed(holds):
            with contextlib.suppress(OSError):
                os.close(fd)
        process, self._process = self._process, None
        if process is None:
            return
        if lock_free(self._users):  # nobody else uses it: it is stopping
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(STOP_GRACE)
        else:
            process.poll()  # still serving the others: reparented to init when this exits

    def __enter__(self) -> SharedServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def attach_shared(
    plan: LaunchPlan,
    *,
    home: Path,
    log_path: Path,
    timeout: float = START_TIMEOUT,
    on_start: Callable[[], None] | None = None,
) -> SharedServer:
    """Use the shared server for ``plan``, starting it if no instance has; ``on_start`` is
    called before a start (which takes the model's loading time). Raises EmbeddedError as
    start_embedded does."""
    directory = share_dir(home)
    ensure_private_dir(directory)
    key = share_key(plan)
    users = directory / f"{key}.users"
    info = directory / f"{key}.json"
    start_fd = open_lock(directory / f"{key}.start")
    holds: list[int] = []
    try:
        # One instance at a time decides (and starts); the others wait for its server.
        fcntl.flock(start_fd, fcntl.LOCK_EX)
        holds.append(open_lock(users))
        # Waits only while a server whose last user left withdraws its address.
        fcntl.flock(holds[0], fcntl.LOCK_SH)
        address = _read_address(info)
        process = None
        if address is None or not _serving(address):
            info.unlink(missing_ok=True)
            if on_start is not None:
                on_start()
            address, process = _start(plan, log_path, timeout, users, info)
    except BaseException:
        for fd in holds:
            os.close(fd)
        raise
    finally:
        os.close(start_fd)
    return SharedServer(address, holds=holds, users=users, process=process)


def _start(
    plan: LaunchPlan, log_path: Path, timeout: float, users: Path, info: Path
) -> tuple[_Address, subprocess.Popen[bytes]]:
    """Start the server, publish its address, and let it go (module docstring)."""
    server = start_embedded(
        replace(plan, slots=SHARED_SLOTS),
        log_path=log_path,
        timeout=timeout,
        shared={"users": str(users), "info": str(info)},
    )
    process = server.process
    address = _Address(server.url, process.pid, SHARED_SLOTS, server.key)
    try:
        data = json.dumps(
            {"url": address.url, "pid": address.pid, "slots": address.slots, "key": address.key}
        )
        replace_with(
            info.with_name(f".{info.name}.{os.getpid()}"),
            info,
            data.encode(),
            PRIVATE_FILE_MODE,
        )
        assert process.stdin is not None
        process.stdin.write(b"adopted\n")
        process.stdin.close()
    except (OSError, ValueError) as exc:
        info.unlink(missing_ok=True)
        server.stop()
        raise EmbeddedError(f"the shared llama.cpp server could not be published: {exc}") from None
    if process.stdout is not None:
        process.stdout.close()
    return address, process


def _read_address(info: Path) -> _Address | None:
    try:
        record = json.loads(read_own_file(info, _INFO_LIMIT))
        url, pid, slots, key = record["url"], record["pid"], record["slots"], record["key"]
    except (UnsafeFile, ValueError, KeyError, TypeError):
        return None
    if not (isinstance(url, str) and url.startswith("http://127.0.0.1:")):
        return None
    if not (isinstance(pid, int) and isinstance(slots, int) and pid > 0 and slots > 0):
        return None
    if not (isinstance(key, str) and key.isascii() and key.isprintable() and 0 < len(key) < 200):
        return None  # a server of an older zcoder (none): started anew, with one
    return _Address(url, pid, slots, key)


def _serving(address: _Address) -> bool:
    """Whether the published server is alive and answers (a killed one left its file)."""
    if not pid_alive(address.pid):
        return False
    try:
        with urllib.request.urlopen(f"{address.url}/health", timeout=_HEALTH_TIMEOUT) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False
