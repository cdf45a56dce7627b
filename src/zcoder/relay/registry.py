"""The shared same-user registry directory: choosing it, validating it, manifests in it.

The registry holds, per live instance, ``a-<instance_id>.sock`` (the listening socket),
``a-<instance_id>.json`` (the public manifest) and, for Python instances,
``a-<instance_id>.lock`` (held with flock for the process lifetime). Nothing here ever
chmods or removes the directory itself.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from zcoder.base.errors import ZcoderError
from zcoder.base.safefile import UnsafeFile, read_own_file, replace_with
from zcoder.relay.activity import (
    activity_members,
    backlog_members,
    pane_id,
    read_activity,
    read_queued,
    read_receipt,
    read_since,
)
from zcoder.relay.protocol import (
    PROTOCOL_VERSION,
    STATES,
    FrameError,
    decode_flat_object,
    encode_flat_object,
    is_instance_id,
    is_positive_int,
)

MAX_SOCKET_PATH_BYTES: Final = 100
MAX_MANIFEST_BYTES: Final = 16 * 1024
MAX_NAME_CHARS: Final = 200  # read from others' manifests; ours are at most 40
MAX_MANIFESTS_EXAMINED: Final = 128
# Bound on directory entries looked at in one scan, whatever else lies in the directory
# (about 20 ms for a full one); only manifest names count toward MAX_MANIFESTS_EXAMINED.
MAX_DIRECTORY_ENTRIES: Final = 65536
MANIFEST_NAME_RE: Final = re.compile(r"a-([A-Za-z0-9_.-]{1,128})\.json")

SOCKET_PATH_TOO_LONG: Final = (
    "relay socket path is too long; set ZCODER_RELAY_DIR to a shorter private path"
)


class RegistryError(ZcoderError):
    """The registry directory cannot be used safely; the message says why."""


def choose_registry_dir(env: Mapping[str, str], explicit: str | None = None) -> Path:
    """ZCODER_RELAY_DIR, else $XDG_RUNTIME_DIR/zcoder-agents, else $TMPDIR/zcoder-<uid>-agents."""
    if explicit:
        return Path(explicit)
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "zcoder-agents"
    return Path(env.get("TMPDIR") or "/tmp") / f"zcoder-{os.geteuid()}-agents"


def prepare_registry_dir(requested: Path, home: str | None) -> Path:
    """Validate (creating it 0700 when missing) and return the canonical registry directory.

    Refused when the path or its final component is a symlink, when it is not a directory
    owned by this user with no group or other bits, or when it is ``/`` or $HOME.
    """
    if not requested.is_absolute():
        raise RegistryError(f"relay directory {requested} is not an absolute path")
    if requested.name in ("", ".", ".."):
        raise RegistryError(f"relay directory {requested} has no usable final component")
    try:
        parent = requested.parent.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise RegistryError(f"relay directory parent {requested.parent} is unusable: {exc}")
    candidate = parent / requested.name
    forbidden = {Path("/")}
    if home:
        with contextlib.suppress(OSError, RuntimeError):
            forbidden.add(Path(home).resolve())
    if candidate in forbidden or requested in forbidden:
        raise RegistryError(f"relay directory {candidate} is not allowed (/ or $HOME)")
    try:
        os.mkdir(candidate, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise RegistryError(f"could not create relay directory {candidate}: {exc.strerror}")
    check_registry_dir(candidate)
    return candidate


def check_registry_dir(path: Path) -> None:
    """Validate a chosen registry directory (once created, and again for every discovery):
    not a symlink, a directory owned by this user with no group or other bits."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise RegistryError(f"relay directory {path} is unavailable: {exc.strerror}")
    if stat.S_ISLNK(st.st_mode):
        raise RegistryError(f"relay directory {path} is a symlink")
    if not stat.S_ISDIR(st.st_mode):
        raise RegistryError(f"relay directory {path} is not a directory")
    if st.st_uid != os.geteuid():
        raise RegistryError(
            f"relay directory {path} belongs to another user (uid {st.st_uid}), who could"
            " read or fake messages; set ZCODER_RELAY_DIR to a private directory of yours"
        )
    if st.st_mode & 0o077:
        raise RegistryError(
            f"relay directory {path} has group or other permissions "
            f"({stat.filemode(st.st_mode)}); it must be private (0700): fix it with"
            f" chmod 700, or set ZCODER_RELAY_DIR to a private directory"
        )


def new_instance_id() -> str:
    """``<pid>-<decimal nonce>``; the nonce only has to make collisions improbable."""
    return f"{os.getpid()}-{secrets.randbits(62)}"


def socket_path(registry: Path, instance_id: str) -> Path:
    return registry / f"a-{instance_id}.sock"


def manifest_path(registry: Path, instance_id: str) -> Path:
    return registry / f"a-{instance_id}.json"


def lock_path(registry: Path, instance_id: str) -> Path:
    return registry / f"a-{instance_id}.lock"


def check_socket_path_length(path: Path) -> None:
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise RegistryError(SOCKET_PATH_TOO_LONG)


# --- manifests ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Manifest:
    instance_id: str
    pid: int
    project: str
    workspace: str
    session_id: str
    profile: str
    model: str
    socket: str
    state: str
    started_at: int
    waiting_on: str = ""  # the instance id it waits on now (zcoder.relay.waits), "" none
    # The instance's friendly name (zcoder.relay.names); zcoder.zsh writes none. Written
    # after the spec's members: peers accept and ignore extra scalar members.
    name: str = ""
    # What it is doing, since when, and its tmux pane (zcoder.relay.activity).
    activity: str = ""
    activity_since: int = 0
    tmux_pane: str = ""
    # Messages waiting their turn (None: not said), the last receipt received and when.
    queued: int | None = None
    last_receipt: str = ""
    last_receipt_at: int = 0
    # The machine it was listed on over SSH (zcoder.relay.hosts); "" for this one. Never
    # in a manifest file: a listing sets it.
    host: str = ""

    def to_payload(self) -> bytes:
        extra: dict[str, str | int] = {"name": self.name} if self.name else {}
        extra |= activity_members(self.activity, self.activity_since, self.tmux_pane)
        extra |= backlog_members(self.queued, self.last_receipt, self.last_receipt_at)
        return encode_flat_object(
            {
                "protocol": PROTOCOL_VERSION,
                "instance_id": self.instance_id,
                "pid": self.pid,
                "project": self.project,
                "workspace": self.workspace,
                "session_id": self.session_id,
                "profile": self.profile,
                "model": self.model,
                "socket": self.socket,
                "state": self.state,
                "started_at": self.started_at,
                **extra,
                **({"waiting_on": self.waiting_on} if self.waiting_on else {}),
            }
        )


class ManifestError(ZcoderError, ValueError):
    """A manifest file that discovery must skip; the message says why."""


def write_manifest(registry: Path, manifest: Manifest) -> None:
    """Write atomically: a private temporary file in the same directory, then rename."""
    final = manifest_path(registry, manifest.instance_id)
    temporary = registry / f".tmp-a-{manifest.instance_id}-{secrets.token_hex(4)}"
    replace_with(temporary, final, manifest.to_payload(), 0o600)


def _text_member(obj: dict[str, object], key: str, *, required: bool) -> str:
    value = obj.get(key, "")
    if not isinstance(value, str):
        raise ManifestError(f"{key} is not a string")
    if required and not value:
        raise ManifestError(f"{key} is empty")
    return value


def parse_manifest(data: bytes, registry: Path, file_name: str) -> Manifest:
    """Every check discovery makes on a manifest's contents."""
    try:
        obj: dict[str, object] = dict(decode_flat_object(data))
    except FrameError as exc:
        raise ManifestError(str(exc)) from None
    protocol = obj.get("protocol")
    if protocol != PROTOCOL_VERSION or isinstance(protocol, bool):
        raise ManifestError("protocol is not 1")
    instance_id = obj.get("instance_id")
    if not is_instance_id(instance_id):
        raise ManifestError("instance_id does not match the grammar")
    assert isinstance(instance_id, str)
    if file_name != f"a-{instance_id}.json":
        raise ManifestError("file name does not match instance_id")
    pid = obj.get("pid")
    if not is_positive_int(pid):
        raise ManifestError("pid is not a positive integer")
    assert isinstance(pid, int)
    expected_socket = str(socket_path(registry, instance_id))
    sock = _text_member(obj, "socket", required=True)
    if sock != expected_socket:
        raise ManifestError("socket is not this registry's socket for the instance")
    state = obj.get("state", "ready")
    if state not in STATES:
        state = "ready"
    assert isinstance(state, str)
    started_at = obj.get("started_at", 0)
    if not isinstance(started_at, int) or isinstance(started_at, bool):
        started_at = 0
    name = obj.get("name", "")
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
        name = ""  # optional and self-reported: an odd one is dropped, the manifest kept
    waiting_on = obj.get("waiting_on", "")
    waiting_on = waiting_on if is_instance_id(waiting_on) else ""  # optional, as name
    return Manifest(
        instance_id=instance_id,
        pid=pid,
        project=_text_member(obj, "project", required=True),
        workspace=_text_member(obj, "workspace", required=True),
        session_id=_text_member(obj, "session_id", required=False),
        profile=_text_member(obj, "profile", required=False),
        model=_text_member(obj, "model", required=False),
        socket=sock,
        state=state,
        started_at=started_at,
        waiting_on=waiting_on,
        name=name,
        activity=read_activity(obj.get("activity")),
        activity_since=read_since(obj.get("activity_since")),
        tmux_pane=pane_id(obj.get("tmux_pane")),
        queued=read_queued(obj.get("queued")),
        last_receipt=read_receipt(obj.get("last_receipt")),
        last_receipt_at=read_since(obj.get("last_receipt_at")),
    )


def read_manifest_file(registry: Path, file_name: str) -> Manifest:
    """Read (safely: see read_own_file), check and parse one manifest."""
    try:
        data = read_own_file(registry / file_name, MAX_MANIFEST_BYTES)
    except UnsafeFile as exc:
        raise ManifestError(str(exc)) from None
    return parse_manifest(data, registry, file_name)


def list_manifest_names(registry: Path) -> list[str]:
    """Names of at most MAX_MANIFESTS_EXAMINED candidate manifests, in a stable order.

    Only names of the manifest grammar count toward the bound, so other files cannot hide a
    peer. When there are more candidates than the bound, those with a socket beside them
    come first, then the newest: leftovers and junk cannot hide a live peer either.
    """
    present: set[str] = set()
    with os.scandir(registry) as entries:
        for entry in itertools.islice(entries, MAX_DIRECTORY_ENTRIES):
            present.add(entry.name)
    names = sorted(name for name in present if MANIFEST_NAME_RE.fullmatch(name))
    if len(names) <= MAX_MANIFESTS_EXAMINED:
        return names

    def preference(name: str) -> tuple[bool, int]:
        has_socket = name.removesuffix(".json") + ".sock" in present
        try:
            modified = os.lstat(registry / name).st_mtime_ns
        except OSError:
            modified = 0
        return (has_socket, modified)

    chosen = sorted(names, key=preference, reverse=True)[:MAX_MANIFESTS_EXAMINED]
    return sorted(chosen)


_FileIdentity = tuple[int, int, int, int, int, int, int]


def _identity(st: os.stat_result) -> _FileIdentity:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_uid)


class ManifestCache:
    """Checked manifests keyed by their file's identity, for the receiver's sender check.

    Every enqueue reads the sender's manifest; re-opening and re-parsing a file that has not
    changed cost ~70 µs of each round trip. The file is still lstat'ed on every lookup, so a
    manifest that was replaced, rewritten, removed or re-moded is read and checked again.
    Only a manifest that passed every check is kept, and only when its identity did not
    change while it was read. At most ``limit`` entries; one thread uses it (the listener).
    """

    def __init__(self, limit: int = MAX_MANIFESTS_EXAMINED) -> None:
        self.limit = limit
        self._entries: dict[str, tuple[_FileIdentity, Manifest]] = {}

    def read(self, registry: Path, file_name: str) -> Manifest:
        path = f"{registry}/{file_name}"  # a str, and no os.path.join: once per enqueue
        try:
            before = _identity(os.lstat(path))
        except OSError as exc:
            self._entries.pop(file_name, None)
            raise ManifestError(f"cannot open: {exc.strerror}") from None
        cached = self._entries.get(file_name)
        if cached is not None and cached[0] == before:
            return cached[1]
        self._entries.pop(file_name, None)
        manifest = read_manifest_file(registry, file_name)
        with contextlib.suppress(OSError):
            if _identity(os.lstat(path)) == before:
                if len(self._entries) >= self.limit:
                    self._entries.clear()
                self._entries[file_name] = (before, manifest)
        return manifest


def unlink_own(path: Path, registry: Path, instance_id: str, kind: int) -> None:
    """Unlink one of this instance's own files, after checking name, owner and file type."""
    expected = {
        stat.S_IFSOCK: socket_path(registry, instance_id),
        stat.S_IFREG: manifest_path(registry, instance_id),
    }
    allowed = path in expected.values() or path == lock_path(registry, instance_id)
    if not allowed or path.parent != registry:
        raise RegistryError(f"refusing to remove {path}: not this instance's file")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_IFMT(st.st_mode) != kind or st.st_uid != os.geteuid():
        raise RegistryError(f"refusing to remove {path}: unexpected owner or file type")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
